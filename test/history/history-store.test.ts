import fc from "fast-check";
import { Redis } from "ioredis";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ChatMessage, ToolCallRecord } from "../../src/contracts/chat-message.js";
import { createHistoryStore, type HistorySize } from "../../src/history/history-store.js";
import { estimateMessageTokens } from "../../src/tokens/token-estimate.js";
import { createTestRedis, type TestRedis } from "../support/redis.js";

let t: TestRedis;
beforeEach(() => {
  t = createTestRedis("hist");
});
afterEach(async () => {
  await t.cleanup();
});

const user = (content: string, name?: string): ChatMessage => ({ role: "user", content, ...(name ? { name } : {}) });
const answer = (content: string): ChatMessage => ({ role: "assistant", content });
const call = (id: string, name: string, args: string): ToolCallRecord => ({
  id,
  type: "function",
  function: { name, arguments: args },
});

describe("history store", () => {
  it("does not store a turn whose question was asked before the last /reset", async () => {
    const store = createHistoryStore({
      redis: t.redis,
      prefix: t.prefix,
      maxMessages: 40,
      maxTokens: 6000,
      ttlSeconds: 3600,
    });
    await store.append("dc:9", [user("old question"), answer("old answer")], { askedAt: 1_000 });
    await store.reset("dc:9", 2_000);
    // The answer to a question from before the reset finished streaming afterwards: it must not come back.
    expect(await store.append("dc:9", [user("asked before reset"), answer("late answer")], { askedAt: 1_500 })).toBe(
      false,
    );
    expect(await store.load("dc:9")).toEqual([]);
    expect(await store.append("dc:9", [user("asked after reset"), answer("kept")], { askedAt: 2_500 })).toBe(true);
    expect(await store.load("dc:9")).toEqual([user("asked after reset"), answer("kept")]);
  });

  it("keeps a conversation across a reconnect (a new connection and a new store see the same history)", async () => {
    const first = createHistoryStore({
      redis: t.redis,
      prefix: t.prefix,
      maxMessages: 40,
      maxTokens: 6000,
      ttlSeconds: 3600,
    });
    const turn: ChatMessage[] = [
      user("Alice: 北京天气怎么样？", "Alice"),
      { role: "assistant", content: "", tool_calls: [call("c1", "get_weather", '{"city":"北京"}')] },
      { role: "tool", tool_call_id: "c1", content: '{"temperature":21}' },
      answer("北京现在 21°C。"),
    ];
    await first.append("tg:1", turn);

    const other = new Redis(t.url);
    try {
      const second = createHistoryStore({
        redis: other,
        prefix: t.prefix,
        maxMessages: 40,
        maxTokens: 6000,
        ttlSeconds: 3600,
      });
      expect(await second.load("tg:1")).toEqual(turn);
      await second.append("tg:1", [user("Bob: and tomorrow?", "Bob"), answer("Sunny.")]);
      expect(await first.load("tg:1")).toEqual([...turn, user("Bob: and tomorrow?", "Bob"), answer("Sunny.")]);
    } finally {
      other.disconnect();
    }
  });

  it("sets the TTL on append and refreshes it on the next append", async () => {
    const store = createHistoryStore({
      redis: t.redis,
      prefix: t.prefix,
      maxMessages: 40,
      maxTokens: 6000,
      ttlSeconds: 500,
    });
    await store.append("dc:9", [user("hi"), answer("hello")]);
    const key = `${t.prefix}:history:dc:9`;
    const ttl = await t.redis.ttl(key);
    expect(ttl).toBeGreaterThan(490);
    expect(ttl).toBeLessThanOrEqual(500);
    expect(await t.redis.ttl(`${key}:tokens`)).toBeGreaterThan(490);
    await t.redis.expire(key, 10);
    await store.append("dc:9", [user("again"), answer("sure")]);
    expect(await t.redis.ttl(key)).toBeGreaterThan(490);
  });

  it("reset forgets the conversation and only that one", async () => {
    const store = createHistoryStore({
      redis: t.redis,
      prefix: t.prefix,
      maxMessages: 40,
      maxTokens: 6000,
      ttlSeconds: 60,
    });
    await store.append("tg:1", [user("a"), answer("b")]);
    await store.append("tg:2", [user("c"), answer("d")]);
    await store.reset("tg:1");
    expect(await store.load("tg:1")).toEqual([]);
    expect(await store.load("tg:2")).toEqual([user("c"), answer("d")]);
  });

  it("keeps deployments apart: the same conversation under two prefixes", async () => {
    const a = createHistoryStore({
      redis: t.redis,
      prefix: `${t.prefix}-a`,
      maxMessages: 40,
      maxTokens: 6000,
      ttlSeconds: 60,
    });
    const b = createHistoryStore({
      redis: t.redis,
      prefix: `${t.prefix}-b`,
      maxMessages: 40,
      maxTokens: 6000,
      ttlSeconds: 60,
    });
    await a.append("tg:1", [user("for a"), answer("A")]);
    expect(await b.load("tg:1")).toEqual([]);
    await b.reset("tg:1");
    expect(await a.load("tg:1")).toEqual([user("for a"), answer("A")]);
  });

  it("trims by message count to whole exchanges, oldest first", async () => {
    const store = createHistoryStore({
      redis: t.redis,
      prefix: t.prefix,
      maxMessages: 5,
      maxTokens: 100_000,
      ttlSeconds: 60,
    });
    const sizes: HistorySize[] = [];
    for (let i = 1; i <= 4; i++)
      await store.append("k", [user(`q${i}`), answer(`a${i}`)], {
        tokens: [3, 2],
        onStored: (size) => sizes.push(size),
      });
    // 8 messages > 5: the longest suffix that starts with a user message and fits is q3..a4.
    expect(await store.load("k")).toEqual([user("q3"), answer("a3"), user("q4"), answer("a4")]);
    // Each append tells the history's size as stored, after the trim.
    expect(sizes).toEqual([
      { tokens: 5, messages: 2 },
      { tokens: 10, messages: 4 },
      { tokens: 10, messages: 4 },
      { tokens: 10, messages: 4 },
    ]);
  });

  it("trims by the token estimate (CJK counts about a token per character)", async () => {
    const store = createHistoryStore({
      redis: t.redis,
      prefix: t.prefix,
      maxMessages: 100,
      maxTokens: 60,
      ttlSeconds: 60,
    });
    await store.append("k", [user("北".repeat(40)), answer("ok")]);
    await store.append("k", [user("short"), answer("fine")]);
    // 44 + 5 + 6 + 5 = 60 fits; one more turn must drop the first exchange.
    expect(await store.load("k")).toHaveLength(4);
    await store.append("k", [user("x"), answer("y")]);
    expect(await store.load("k")).toEqual([user("short"), answer("fine"), user("x"), answer("y")]);
    const total = Number(await t.redis.get(`${t.prefix}:history:k:tokens`));
    expect(total).toBe(
      [user("short"), answer("fine"), user("x"), answer("y")].reduce((s, m) => s + estimateMessageTokens(m), 0),
    );
  });

  it("recounts the earlier messages once when the token total was lost apart from the list, and still trims by it", async () => {
    const store = createHistoryStore({
      redis: t.redis,
      prefix: t.prefix,
      maxMessages: 100,
      maxTokens: 60,
      ttlSeconds: 60,
    });
    const tokens = (messages: ChatMessage[]) => messages.reduce((sum, m) => sum + estimateMessageTokens(m), 0);
    const first = [user("北".repeat(40)), answer("ok")];
    await store.append("k", first);
    await t.redis.del(`${t.prefix}:history:k:tokens`);
    const second = [user("short"), answer("fine")];
    await store.append("k", second);
    expect(Number(await t.redis.get(`${t.prefix}:history:k:tokens`))).toBe(tokens([...first, ...second]));
    // The recounted total is what trimming goes by: one more turn is over 60 and drops the first exchange.
    await t.redis.del(`${t.prefix}:history:k:tokens`);
    await store.append("k", [user("x"), answer("y")]);
    expect(await store.load("k")).toEqual([...second, user("x"), answer("y")]);
    expect(Number(await t.redis.get(`${t.prefix}:history:k:tokens`))).toBe(tokens([...second, user("x"), answer("y")]));
  });

  it("never keeps a tool result without its call, even when the budget falls inside a tool group", async () => {
    const turn: ChatMessage[] = [
      user("weather in two cities?"),
      { role: "assistant", content: "", tool_calls: [call("a", "get_weather", "{}"), call("b", "get_weather", "{}")] },
      { role: "tool", tool_call_id: "a", content: "1" },
      { role: "tool", tool_call_id: "b", content: "2" },
      answer("both sunny"),
    ];
    // 5 messages, budget 4: no user message can start a fitting history; the whole tool group can.
    const four = createHistoryStore({
      redis: t.redis,
      prefix: t.prefix,
      maxMessages: 4,
      maxTokens: 100_000,
      ttlSeconds: 60,
    });
    await four.append("k4", turn);
    expect(await four.load("k4")).toEqual(turn.slice(1));
    // Budget 3 falls inside the group: the cut moves past the results to the answer, never onto a tool message.
    const three = createHistoryStore({
      redis: t.redis,
      prefix: t.prefix,
      maxMessages: 3,
      maxTokens: 100_000,
      ttlSeconds: 60,
    });
    await three.append("k3", turn);
    expect(await three.load("k3")).toEqual([answer("both sunny")]);
  });

  it("drops damaged elements and orphaned tool messages on load", async () => {
    const store = createHistoryStore({
      redis: t.redis,
      prefix: t.prefix,
      maxMessages: 40,
      maxTokens: 6000,
      ttlSeconds: 60,
    });
    const key = `${t.prefix}:history:k`;
    await t.redis.rpush(
      key,
      `t3|${JSON.stringify({ role: "tool", tool_call_id: "zz", content: "orphan" })}`,
      "garbage",
      `u3|${JSON.stringify(user("hello"))}`,
      `c3|${JSON.stringify({ role: "assistant", content: "", tool_calls: [call("q", "get_time", "{}")] })}`,
      `u3|${JSON.stringify(user("interrupted turn"))}`,
    );
    expect(await store.load("k")).toEqual([user("hello"), user("interrupted turn")]);
  });
});

// ---------------------------------------------------------------------------------------------
// Property: after any sequence of appended turns, the stored history is exactly what the trimming
// rule says, fits the budget, never starts with a tool message and never splits a tool group.

type Turn = ChatMessage[];

const textArb = fc.oneof(
  fc.string({ maxLength: 60 }),
  fc.array(fc.constantFrom("北", "京", "天", "气", "好"), { maxLength: 30 }).map((cs) => cs.join("")),
);

const turnArb: fc.Arbitrary<Turn> = fc
  .record({
    question: textArb,
    rounds: fc.array(fc.array(textArb, { minLength: 1, maxLength: 3 }), { maxLength: 3 }),
    final: textArb,
  })
  .map(({ question, rounds, final }) => {
    const turn: Turn = [user(question)];
    rounds.forEach((results, r) => {
      const ids = results.map((_, i) => `call_${r}_${i}_${Math.random().toString(36).slice(2, 8)}`);
      turn.push({ role: "assistant", content: "", tool_calls: ids.map((id) => call(id, "get_news", '{"topic":"x"}')) });
      results.forEach((content, i) => turn.push({ role: "tool", tool_call_id: ids[i] as string, content }));
    });
    turn.push(answer(final));
    return turn;
  });

/** The rule, written independently of the Lua: applied after every append. */
function trimmed(current: ChatMessage[], maxMessages: number, maxTokens: number): ChatMessage[] {
  const tokens = (ms: ChatMessage[]): number => ms.reduce((s, m) => s + estimateMessageTokens(m), 0);
  const fits = (i: number): boolean => current.length - i <= maxMessages && tokens(current.slice(i)) <= maxTokens;
  if (fits(0)) return current;
  const starts = (pred: (m: ChatMessage) => boolean): number => current.findIndex((m, i) => pred(m) && fits(i));
  const atUser = starts((m) => m.role === "user" || m.role === "system");
  const at = atUser >= 0 ? atUser : starts((m) => m.role === "assistant");
  return at >= 0 ? current.slice(at) : [];
}

function assertToolGroupsWhole(history: ChatMessage[]): void {
  expect(history[0]?.role).not.toBe("tool");
  for (let i = 0; i < history.length; i++) {
    const m = history[i] as ChatMessage;
    if (m.role === "assistant" && m.tool_calls?.length) {
      const following = history.slice(i + 1, i + 1 + m.tool_calls.length);
      expect(following.map((f) => (f.role === "tool" ? f.tool_call_id : f.role))).toEqual(
        m.tool_calls.map((c) => c.id),
      );
    }
    if (m.role === "tool") {
      const prev = history
        .slice(0, i)
        .reverse()
        .find((p) => p.role !== "tool");
      expect(prev?.role === "assistant" && prev.tool_calls?.some((c) => c.id === m.tool_call_id)).toBe(true);
    }
  }
}

describe("history trimming (property)", () => {
  it("matches the trimming rule, stays in budget and keeps tool groups whole", async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(turnArb, fc.boolean()), { minLength: 1, maxLength: 8 }),
        fc.integer({ min: 1, max: 14 }),
        fc.integer({ min: 5, max: 300 }),
        async (turns, maxMessages, maxTokens) => {
          const store = createHistoryStore({
            redis: t.redis,
            prefix: t.prefix,
            maxMessages,
            maxTokens,
            ttlSeconds: 60,
          });
          const key = `prop:${run++}`;
          let expected: ChatMessage[] = [];
          const all: ChatMessage[] = [];
          for (const [turn, splitUserFirst] of turns) {
            // The agent may append the user message and the rest of the turn separately.
            const parts = splitUserFirst ? [turn.slice(0, 1), turn.slice(1)] : [turn];
            for (const part of parts) {
              await store.append(key, part);
              expected = trimmed([...expected, ...part], maxMessages, maxTokens);
            }
            all.push(...turn);
          }
          const history = await store.load(key);
          expect(history).toEqual(expected);
          expect(history.length).toBeLessThanOrEqual(maxMessages);
          expect(history.reduce((s, m) => s + estimateMessageTokens(m), 0)).toBeLessThanOrEqual(maxTokens);
          expect(all.slice(all.length - history.length)).toEqual(history);
          assertToolGroupsWhole(history);
        },
      ),
      { numRuns: 60 },
    );
  });
});
