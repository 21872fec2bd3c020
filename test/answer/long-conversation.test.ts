/**
 * Long conversations with the real answer path (agent loop, token counter, budget, summaries,
 * Redis) against the fake llama.cpp server with its context check on: requests always fit,
 * what falls out of the kept turns lives on in the summary the next request carries, group
 * summaries keep their speakers, a context-size refusal is survived, a failed summary costs
 * nothing.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { compactReplyText } from "../../src/answer/conversation-compactor.js";
import { textAnswer, unavailable, type FakeHandler, type RecordedRequest } from "../fakes/openai-server.js";
import { startMemoryHarness, type MemoryHarness } from "./memory-harness.js";

let h: MemoryHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const CONTEXT = 2048;
const MAX_TOKENS = 512;

/** The fake model: summaries list every locker code they were shown; answers look the code up in what they were sent. */
const lockerModel: FakeHandler = (request) => {
  const messages = request.body.messages ?? [];
  if (request.body.stream !== true) {
    // The summary request is the conversation itself with the instruction last: the codes are in the turns it carries.
    const prompt = messages.map((m) => String(m.content ?? "")).join("\n");
    const codes = [...new Set([...prompt.matchAll(/locker (\d+) is (\d+)/g)].map((m) => `locker ${m[1]} is ${m[2]}`))];
    return textAnswer(`Ada gave these codes: ${codes.join("; ")}.`);
  }
  const last = String(messages.at(-1)?.content ?? "");
  const asked = /code for locker (\d+)\?/.exec(last);
  if (asked) {
    const sent = messages.map((m) => String(m.content ?? "")).join("\n");
    const found = new RegExp(`locker ${asked[1]} is (\\d+)`).exec(sent);
    return textAnswer(found ? `Locker ${asked[1]}: ${found[1]}` : "I do not know that code.");
  }
  return textAnswer(`Noted locker ${/locker (\d+)/.exec(last)?.[1] ?? "?"}.`);
};

const chatRequests = (requests: RecordedRequest[]): RecordedRequest[] => requests.filter((r) => r.body.stream === true);
const summaryRequests = (requests: RecordedRequest[]): RecordedRequest[] =>
  requests.filter((r) => r.body.stream !== true);

describe("a long conversation", () => {
  it("60 turns never exceed the budget; dropped turns live on in the stored summary, and an early fact is still answered", {
    timeout: 60_000,
  }, async () => {
    h = await startMemoryHarness({
      env: { MODEL_MAX_TOKENS: String(MAX_TOKENS) },
      llama: { contextTokens: CONTEXT, enforceContext: true },
      handler: lockerModel,
    });
    // The history is read to build each request; after an answer only when the store's own size says it may need a fold.
    const reads = vi.spyOn(h.history, "loadStored");
    // The summary is read once per answer, to build its request; again only by a fold.
    const gets = vi.spyOn(h.redis, "get");
    const summaryReads = () => gets.mock.calls.filter(([key]) => String(key).endsWith(":summary")).length;
    let readAfterAnswers = 0;
    for (let i = 1; i <= 60; i++) {
      const before = reads.mock.calls.length;
      const [summariesBefore, foldsBefore] = [summaryReads(), summaryRequests(h.model.requests).length];
      const port = await h.ask(
        `Please remember this: the code for locker ${i} is ${4800 + i}, it is on floor ${i % 7}.`,
      );
      expect(port.visibleTexts().join("")).toBe(`Noted locker ${i}.`);
      const after = reads.mock.calls.length - before - 1;
      if (i <= 3) expect(after, `answer ${i}`).toBe(0);
      readAfterAnswers += after;
      expect(summaryReads() - summariesBefore, `answer ${i}`).toBe(
        1 + summaryRequests(h.model.requests).length - foldsBefore,
      );
    }
    expect(readAfterAnswers).toBeGreaterThan(0);
    expect(readAfterAnswers).toBeLessThan(60);
    // Every request fitted the server's context with room for the completion (the fake counts with Qwen3's template and tokenizer).
    for (const request of h.model.requests) {
      expect(request.promptTokens).toBeDefined();
      expect((request.promptTokens as number) + Number(request.body.max_tokens)).toBeLessThanOrEqual(CONTEXT);
    }
    // Old turns were folded, more than once, by non-streamed requests with thinking off.
    const folds = summaryRequests(h.model.requests);
    expect(folds.length).toBeGreaterThan(1);
    expect(folds.every((r) => r.body.chat_template_kwargs?.enable_thinking === false)).toBe(true);

    // Nothing was forgotten: each code is either in the kept history or in the summary.
    const summary = await h.summaries.read("dc:100");
    const kept = (await h.history.load("dc:100")).map((m) => m.content).join("\n");
    expect(summary?.text).toContain("locker 1 is 4801");
    for (let i = 1; i <= 60; i++) expect(`${summary?.text}\n${kept}`).toContain(`locker ${i} is ${4800 + i}`);
    expect(kept).not.toContain("locker 1 is 4801");

    const port = await h.ask("What was the code for locker 1?");
    expect(port.visibleTexts().join("")).toBe("Locker 1: 4801");
    // The request carried the stored summary as a system note right after the system prompt.
    const last = chatRequests(h.model.requests).at(-1) as RecordedRequest;
    expect(last.body.messages?.[1]).toEqual({
      role: "system",
      content: `Earlier in this conversation: ${summary?.text}`,
    });
    // Metrics: tokens per request and summaries made.
    const text = await h.metrics.registry.metrics();
    expect(text).toMatch(/chatbot_model_request_tokens_count\{kind="prompt"\} 61/);
    expect(text).toMatch(new RegExp(`chatbot_summaries_total\\{outcome="made"\\} ${folds.length}`));
  });

  it("a group summary keeps who said what, and /compact says how much it kept", async () => {
    const groupModel: FakeHandler = (request) => {
      if (request.body.stream === true) return textAnswer("OK.");
      const prompt = String(request.body.messages?.at(-1)?.content ?? "");
      const lines = [...prompt.matchAll(/^(Alice|Bob): (.*)$/gm)].map((m) => `${m[1]} said "${m[2]}"`);
      return textAnswer(lines.join(" "));
    };
    h = await startMemoryHarness({ llama: { enforceContext: true }, handler: groupModel });
    await h.ask("I will bring the tent.", { author: "Alice", chatType: "group" });
    await h.ask("I will bring the stove.", { author: "Bob", chatType: "group" });
    await h.ask("Who brings what?", { author: "Alice", chatType: "group" });

    const outcome = await h.memory.compactor.compactNow("dc:100", { shared: true });
    expect(outcome).toMatchObject({ status: "folded", folded: 4, keptMessages: 2 });
    expect(compactReplyText(outcome)).toMatch(
      /^🗜️ Done: 4 earlier messages are now a short summary \(\d+ tokens\); I kept the last 2 as they are \(\d+ tokens\)\.$/,
    );

    // The model was asked for a summary that names the speakers, and saw each line with its speaker.
    const fold = summaryRequests(h.model.requests)[0] as RecordedRequest;
    expect(fold.body.messages?.[0]?.content).toContain("This is a group chat: say who said or asked what, by name.");
    expect(fold.body.messages?.[1]?.content).toContain(
      "Alice: I will bring the tent.\nAssistant: OK.\nBob: I will bring the stove.",
    );
    const summary = await h.summaries.read("dc:100");
    expect(summary?.text).toBe('Alice said "I will bring the tent." Bob said "I will bring the stove."');
    expect(await h.history.load("dc:100")).toEqual([
      { role: "user", content: "Alice: Who brings what?" },
      { role: "assistant", content: "OK." },
    ]);

    await h.ask("And the food?", { author: "Bob", chatType: "group" });
    const next = chatRequests(h.model.requests).at(-1) as RecordedRequest;
    expect(next.body.messages?.slice(1).map((m) => m.content)).toEqual([
      `Earlier in this conversation: ${summary?.text}`,
      "Alice: Who brings what?",
      "OK.",
      "Bob: And the food?",
    ]);
  });

  it("a context-size refusal is trimmed harder and retried once: the user gets an answer", async () => {
    // The operator claims 8192 tokens; the server really has 1024 (a common mistake) and says so when refusing.
    h = await startMemoryHarness({
      env: { MODEL_CONTEXT_TOKENS: "8192", MODEL_MAX_TOKENS: "256", HISTORY_MAX_MESSAGES: "100" },
      llama: { contextTokens: 1024, enforceContext: true },
      handler: (request) =>
        request.body.stream === true ? textAnswer("Still here.") : textAnswer("They talked about lockers."),
    });
    for (let i = 1; i <= 30; i++) {
      const turn = [
        {
          role: "user" as const,
          content: `Please remember this: the code for locker ${i} is ${4800 + i}, it is on floor ${i % 7}.`,
        },
        { role: "assistant" as const, content: `Noted locker ${i}.` },
      ];
      await h.history.append("dc:100", turn, { tokens: await h.memory.context.countTurn(turn) });
    }
    const port = await h.ask("Are you still there?");
    expect(port.visibleTexts().join("")).toBe("Still here.");
    const [refused, retried] = chatRequests(h.model.requests);
    expect(refused?.promptTokens).toBeGreaterThan(1024);
    expect(retried?.promptTokens).toBeLessThanOrEqual(1024);
    expect(retried?.body.messages?.at(-1)?.content).toBe("Are you still there?");
    // One retry, not a loop: exactly two answer requests.
    expect(chatRequests(h.model.requests)).toHaveLength(2);
  });

  it("a summary request that fails leaves the history as it was, and the answer stands", async () => {
    h = await startMemoryHarness({
      env: { MODEL_MAX_TOKENS: String(MAX_TOKENS), HISTORY_MAX_MESSAGES: "8" },
      llama: { contextTokens: CONTEXT, enforceContext: true },
      handler: (request) => (request.body.stream === true ? textAnswer("Noted.") : unavailable()),
    });
    for (let i = 1; i <= 3; i++) await h.ask(`fact ${i}`);
    const before = await h.history.loadStored("dc:100");
    expect(before).toHaveLength(6);
    // The fourth turn passes three quarters of HISTORY_MAX_MESSAGES: a fold is tried and fails.
    const port = await h.ask("fact 4");
    expect(port.visibleTexts().join("")).toBe("Noted.");
    expect(summaryRequests(h.model.requests)).toHaveLength(1);
    expect(await h.summaries.read("dc:100")).toBeUndefined();
    expect((await h.history.load("dc:100")).map((m) => m.content)).toEqual([
      "fact 1",
      "Noted.",
      "fact 2",
      "Noted.",
      "fact 3",
      "Noted.",
      "fact 4",
      "Noted.",
    ]);
    expect(await h.metrics.registry.metrics()).toMatch(/chatbot_summaries_total\{outcome="failed"\} 1/);
  });
});

describe("a hostile or broken model server (issue 36)", () => {
  it("item 8: a summary far over its cap is refused and not stored; the turns stay and later answers work", async () => {
    // 240 KB of "summary", as the attack's model wrote, whatever max_tokens said.
    const huge = "The user talked about lockers and codes. ".repeat(6000);
    h = await startMemoryHarness({
      env: { MODEL_MAX_TOKENS: String(MAX_TOKENS), HISTORY_MAX_MESSAGES: "8" },
      llama: { contextTokens: CONTEXT, enforceContext: true },
      handler: (request) => (request.body.stream === true ? textAnswer("Noted.") : textAnswer(huge)),
    });
    for (let i = 1; i <= 4; i++) await h.ask(`fact ${i}`);
    expect(summaryRequests(h.model.requests).length).toBeGreaterThanOrEqual(1);
    expect(await h.summaries.read("dc:100")).toBeUndefined();
    expect((await h.history.load("dc:100")).filter((m) => m.role === "user").map((m) => m.content)).toEqual(
      expect.arrayContaining([expect.stringContaining("fact 1"), expect.stringContaining("fact 4")]),
    );
    expect(await h.metrics.registry.metrics()).toMatch(/chatbot_summaries_total\{outcome="failed"\} [1-9]/);
    const port = await h.ask("fact 5");
    expect(port.visibleTexts().join("")).toBe("Noted.");
  });

  it("item 9: a /tokenize that says 200,000 tokens for every text does not erase the history", async () => {
    h = await startMemoryHarness({
      env: { MODEL_MAX_TOKENS: String(MAX_TOKENS) },
      llama: { contextTokens: CONTEXT, enforceContext: true, tokenizeLie: 200_000 },
      handler: (request) => (request.body.stream === true ? textAnswer("Noted.") : textAnswer("Facts were given.")),
    });
    for (let i = 1; i <= 6; i++) await h.ask(`fact ${i}`);
    // The seventh request still carries all six earlier turns.
    await h.ask("Which facts did I give?");
    const last = chatRequests(h.model.requests).at(-1) as RecordedRequest;
    const sent = (last.body.messages ?? []).map((m) => String(m.content)).join("\n");
    for (let i = 1; i <= 6; i++) expect(sent).toContain(`fact ${i}`);
    expect(compactReplyText(await h.memory.compactor.compactNow("dc:100", { shared: false }))).not.toContain(
      "this conversation is empty",
    );
  });
});
