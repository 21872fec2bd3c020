/** The running summary in Redis: a fold trims the summarised turns and stores the summary at once, or changes nothing. */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ChatMessage } from "../../src/contracts/chat-message.js";
import { createHistoryStore, type StoredHistory } from "../../src/history/history-store.js";
import { historyKeys } from "../../src/redis/keys.js";
import { createSummaryStore, type ConversationSummary, type SummaryStore } from "../../src/history/summary-store.js";
import { createTestRedis, type TestRedis } from "../support/redis.js";

let t: TestRedis;
let history: StoredHistory;
let summaries: SummaryStore;
beforeEach(() => {
  t = createTestRedis("summary");
  history = createHistoryStore({ redis: t.redis, prefix: t.prefix, maxMessages: 40, maxTokens: 6000, ttlSeconds: 600 });
  summaries = createSummaryStore({ redis: t.redis, prefix: t.prefix, ttlSeconds: 600 });
});
afterEach(async () => {
  await t.cleanup();
});

const turn = (i: number): ChatMessage[] => [
  { role: "user", content: `question ${i}` },
  { role: "assistant", content: `answer ${i}` },
];
const summary = (text: string): ConversationSummary => ({ text, tokens: 12, messages: 4, updatedAt: 1 });

describe("summary store", () => {
  it("folds the oldest turns: they leave the list, their tokens leave the total, the summary is stored with the TTL", async () => {
    for (let i = 1; i <= 3; i++) await history.append("tg:1", turn(i), { tokens: [7, 5] });
    const stored = await history.loadStored("tg:1");
    expect(stored.map((m) => m.tokens)).toEqual([7, 5, 7, 5, 7, 5]);
    const folded = await summaries.fold("tg:1", {
      count: 4,
      check: { at: 3, element: stored[3]!.element },
      tokens: 24,
      summary: summary("Asked questions 1 and 2."),
      startedAt: Date.now(),
    });
    expect(folded).toBe(true);
    expect((await history.load("tg:1")).map((m) => m.content)).toEqual(["question 3", "answer 3"]);
    expect(await summaries.read("tg:1")).toEqual(summary("Asked questions 1 and 2."));
    const keys = historyKeys(t.prefix, "tg:1");
    expect(await t.redis.get(keys.tokens)).toBe("12");
    expect(await t.redis.ttl(keys.summary)).toBeGreaterThan(590);
  });

  it("keeps the summary as long as the history it stands for; an answer that began without one leaves its lifetime alone", async () => {
    const keys = historyKeys(t.prefix, "tg:1");
    await t.redis.set(keys.summary, JSON.stringify(summary("earlier")), "EX", 100);
    await history.append("tg:1", turn(1));
    expect(await t.redis.ttl(keys.summary)).toBeGreaterThan(590);
    await t.redis.expire(keys.summary, 100);
    // The answer saw no summary (one was written while it streamed, with its own lifetime): no EXPIRE for it.
    await history.append("tg:1", turn(2), { summary: false });
    const ttl = await t.redis.ttl(keys.summary);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(100);
    expect((await history.load("tg:1")).map((m) => m.content)).toEqual([
      "question 1",
      "answer 1",
      "question 2",
      "answer 2",
    ]);
    expect(await t.redis.ttl(keys.list)).toBeGreaterThan(590);
  });

  it("changes nothing when the history moved meanwhile (another fold, a trim)", async () => {
    for (let i = 1; i <= 3; i++) await history.append("tg:1", turn(i), { tokens: [7, 5] });
    const stored = await history.loadStored("tg:1");
    // Someone else folded the first turn in the meantime.
    await t.redis.ltrim(historyKeys(t.prefix, "tg:1").list, 2, -1);
    const folded = await summaries.fold("tg:1", {
      count: 4,
      check: { at: 3, element: stored[3]!.element },
      tokens: 24,
      summary: summary("stale"),
      startedAt: Date.now(),
    });
    expect(folded).toBe(false);
    expect((await history.load("tg:1")).map((m) => m.content)).toEqual([
      "question 2",
      "answer 2",
      "question 3",
      "answer 3",
    ]);
    expect(await summaries.read("tg:1")).toBeUndefined();
  });

  it("a summary asked for before /reset is not stored, and /reset clears summary and history", async () => {
    await history.append("tg:1", turn(1));
    await history.append("tg:1", turn(2));
    const stored = await history.loadStored("tg:1");
    const startedAt = Date.now() - 1000;
    await summaries.fold("tg:1", {
      count: 2,
      check: { at: 1, element: stored[1]!.element },
      tokens: 10,
      summary: summary("first"),
      startedAt,
    });
    expect(await summaries.read("tg:1")).toMatchObject({ text: "first" });

    await history.reset("tg:1");
    expect(await summaries.read("tg:1")).toBeUndefined();
    expect(await history.load("tg:1")).toEqual([]);
    await history.append("tg:1", turn(3));
    await history.append("tg:1", turn(4));
    const again = await history.loadStored("tg:1");
    expect(
      await summaries.fold("tg:1", {
        count: 2,
        check: { at: 1, element: again[1]!.element },
        tokens: 10,
        summary: summary("late"),
        startedAt,
      }),
    ).toBe(false);
    expect(await summaries.read("tg:1")).toBeUndefined();
  });

  it("a summary key that is not ours reads as no summary", async () => {
    await t.redis.set(historyKeys(t.prefix, "tg:1").summary, "not json");
    expect(await summaries.read("tg:1")).toBeUndefined();
  });
});
