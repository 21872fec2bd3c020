/**
 * The model reads only what is new (issue 30): the real answer path (agent loop, budget, summaries,
 * Redis) against the fake llama-server with its slots and prompt cache on. The fake renders each
 * request with Qwen3's chat template, tokenises it with Qwen3's tokenizer and reports
 * `timings.cache_n`/`prompt_n` as llama-server does; the bot's clock moves a minute per turn.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { encodePrompt, encodeText, renderQwen3Prompt } from "../fakes/llama-extras.js";
import { textAnswer, toolCallAnswer, type FakeHandler, type RecordedRequest } from "../fakes/openai-server.js";
import { newsTool, readUrlTool, weatherTool, type Execution } from "../agent/test-tools.js";
import { startMemoryHarness, type MemoryHarness } from "./memory-harness.js";

let h: MemoryHarness | undefined;
afterEach(async () => {
  vi.useRealTimers();
  await h?.close();
  h = undefined;
});

const chatRequests = (requests: RecordedRequest[]): RecordedRequest[] => requests.filter((r) => r.body.stream === true);
const summaryRequests = (requests: RecordedRequest[]): RecordedRequest[] =>
  requests.filter((r) => r.body.stream !== true);

/** Tokens a request adds to the one before it: the messages appended since, rendered, and the assistant turn opened for the answer. */
async function newTokens(previous: RecordedRequest, current: RecordedRequest): Promise<number> {
  const before = previous.body.messages ?? [];
  const now = current.body.messages ?? [];
  // The previous request's messages must be the start of this one's: the history grew by appending.
  expect(now.slice(0, before.length)).toEqual(before);
  const prefix = renderQwen3Prompt({ ...previous.body, messages: before }).replace(
    /<\|im_start\|>assistant\n(<think>\n\n<\/think>\n\n)?$/,
    "",
  );
  const whole = renderQwen3Prompt(current.body);
  expect(whole.startsWith(prefix)).toBe(true);
  return (
    (await encodePrompt(current.body)).length - (await encodePrompt({ ...previous.body, messages: before })).length + 8
  );
}

/** Answers each question with a short text; asks a tool for the weather; writes summaries that list the facts. */
const model: FakeHandler = (request) => {
  const messages = request.body.messages ?? [];
  if (request.body.stream !== true) {
    const facts = [
      ...new Set(
        messages
          .map((m) => String(m.content ?? ""))
          .join("\n")
          .match(/fact \d+ is \w+/g) ?? [],
      ),
    ];
    return textAnswer(`The user told these facts: ${facts.join("; ")}.`);
  }
  const last = messages.at(-1);
  if (last?.role === "tool") return textAnswer(`It is ${String(last.content).slice(0, 40)}.`);
  const text = String(last?.content ?? "");
  if (/weather/.test(text)) return toolCallAnswer([{ name: "get_weather", arguments: { city: "Beijing" } }]);
  return textAnswer(`Noted ${/fact (\d+)/.exec(text)?.[0] ?? "that"}.`);
};

describe("prompt cache", () => {
  it("a ten-turn private chat a minute apart: from turn 2 the server reads only each turn's new tokens (+32), but for one fold", {
    timeout: 90_000,
  }, async () => {
    vi.useFakeTimers({ toFake: ["Date"], now: new Date("2026-12-04T13:39:00Z") });
    const log: Execution[] = [];
    h = await startMemoryHarness({
      env: { MODEL_MAX_TOKENS: "512", HISTORY_MAX_MESSAGES: "16" },
      llama: { contextTokens: 2048, enforceContext: true, promptCache: true },
      handler: model,
      tools: [weatherTool(log, { Beijing: 21 }, 1), newsTool(log, []), readUrlTool(log, {})],
    });
    const perTurn: Array<{ turn: number; processed: number; allowed: number; afterFold: boolean }> = [];
    for (let turn = 1; turn <= 10; turn++) {
      vi.setSystemTime(new Date(Date.parse("2026-12-04T13:39:00Z") + (turn - 1) * 60_000));
      const chatsBefore = chatRequests(h.model.requests).length;
      const question =
        turn % 4 === 0
          ? "What is the weather in Beijing now?"
          : `Please remember that fact ${turn} is ${"alpha beta gamma delta epsilon zeta eta theta".split(" ")[turn % 8]}, and that it matters for the trip we are planning next month with the whole family.`;
      await h.ask(question);
      const requests = chatRequests(h.model.requests);
      if (turn === 1) continue;
      // Every request of the turn (a tool round makes two), each against the request before it.
      for (let i = chatsBefore; i < requests.length; i++) {
        const current = requests[i] as RecordedRequest;
        const previous = requests[i - 1] as RecordedRequest;
        // A summary written since the previous request changes the note after the system prompt: read again once.
        const afterFold = summaryRequests(h.model.requests).some(
          (r) => r.index > previous.index && r.index < current.index,
        );
        const allowed = afterFold ? Number.POSITIVE_INFINITY : (await newTokens(previous, current)) + 32;
        perTurn.push({ turn, processed: current.processedTokens as number, allowed, afterFold });
      }
    }
    const over = perTurn.filter((t) => t.processed > t.allowed);
    expect(over, JSON.stringify(perTurn)).toEqual([]);
    // The first request after a fold reads the new summary and what follows it: at most one turn in five.
    // Each summary request is the conversation's last request with the instruction last: the server reads the
    // instruction (and the answer it had just written, rendered again), not the conversation.
    for (const summary of summaryRequests(h.model.requests)) {
      const instruction = String(summary.body.messages?.at(-1)?.content);
      expect(instruction).toMatch(/^Now write a summary of this whole conversation/);
      expect(summary.body.tools).toEqual(chatRequests(h.model.requests)[0]?.body.tools);
      const instructionTokens = (
        await encodeText(`<|im_start|>user\n${instruction}<|im_end|>\n<|im_start|>assistant\n`)
      ).length;
      expect(summary.processedTokens).toBeLessThanOrEqual(instructionTokens + 32);
    }
    const foldTurns = new Set(perTurn.filter((t) => t.afterFold).map((t) => t.turn));
    expect(foldTurns.size).toBeLessThanOrEqual(2);
    expect(summaryRequests(h.model.requests).length).toBeGreaterThanOrEqual(1);
    expect(log.filter((e) => e.name === "get_weather").length).toBeGreaterThanOrEqual(2);
    // /metrics counts what was read and what was reused.
    const text = await h.metrics.registry.metrics();
    const reused = Number(/chatbot_model_prompt_tokens_total\{kind="reused"\} (\d+)/.exec(text)?.[1]);
    const processed = Number(/chatbot_model_prompt_tokens_total\{kind="processed"\} (\d+)/.exec(text)?.[1]);
    expect(reused).toBeGreaterThan(processed);
  });

  it("two chats with the same settings share system prompt and tools byte for byte, and the second reads them from the cache", {
    timeout: 60_000,
  }, async () => {
    const log: Execution[] = [];
    h = await startMemoryHarness({
      llama: { promptCache: true },
      handler: model,
      tools: [weatherTool(log, { Beijing: 21 }, 1), newsTool(log, []), readUrlTool(log, {})],
    });
    await h.ask("Hello from the first chat.", { conversationKey: "dc:1" });
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 5 * 60_000 });
    await h.ask("Hello from the second chat, five minutes later.", { conversationKey: "dc:2" });
    const [first, second] = chatRequests(h.model.requests) as [RecordedRequest, RecordedRequest];
    expect(second.body.messages?.[0]).toEqual(first.body.messages?.[0]);
    expect(JSON.stringify(second.body.tools)).toBe(JSON.stringify(first.body.tools));
    // The second chat's request was read from the first one's cache up to its own message.
    // The system turn (system prompt and tools) as the template renders it, without the assistant turn opened after it.
    const systemTurn = { messages: first.body.messages?.slice(0, 1), tools: first.body.tools };
    expect(renderQwen3Prompt(systemTurn).length).toBeGreaterThan(1000);
    const sharedTokens = (await encodePrompt(systemTurn)).length - (await encodeText("<|im_start|>assistant\n")).length;
    expect(second.cachedTokens).toBeGreaterThanOrEqual(sharedTokens);
  });
});
