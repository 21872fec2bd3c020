/**
 * The default transport (node:http, streams read without web streams) against the same client on
 * the global fetch (undici, the SDK's own Stream): over the fake llama.cpp server, every answer and
 * every fault must come out of streamRound the same, and aborts and the idle limit must act the same.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type OpenAI from "openai";
import { createModelClient } from "../../src/agent/model-client.js";
import { ModelError } from "../../src/agent/model-error.js";
import { streamRound, type StreamRoundResult } from "../../src/agent/stream-round.js";
import type { StreamDelta } from "../../src/agent/stream-accumulator.js";
import { createSummarizer } from "../../src/agent/conversation-summarizer.js";
import {
  contextExceeded,
  destroyConnection,
  dropAfter,
  errorEventAfter,
  fragmented,
  httpError,
  rateLimited,
  replay,
  serverError,
  stallAfter,
  startFakeOpenAI,
  textAnswer,
  toolCallAnswer,
  type FakeOpenAI,
  type ResponsePlan,
} from "../fakes/openai-server.js";

const dir = fileURLToPath(new URL("./fixtures/llama-server/", import.meta.url));
const capture = (name: string): ResponsePlan =>
  replay(readFileSync(`${dir}${name}.headers`, "utf8"), readFileSync(`${dir}${name}.sse`));

let fake: FakeOpenAI;
beforeEach(async () => {
  fake = await startFakeOpenAI();
});
afterEach(async () => {
  await fake.close();
});

const transport = (): OpenAI => createModelClient({ baseURL: fake.url, apiKey: "sk-test", timeoutMs: 5_000 });
const undici = (): OpenAI =>
  createModelClient({ baseURL: fake.url, apiKey: "sk-test", timeoutMs: 5_000, fetch: globalThis.fetch });
const body = {
  model: "m",
  messages: [{ role: "user" as const, content: "Hi" }],
  stream: true as const,
  stream_options: { include_usage: true },
};

interface RoundRun {
  deltas: StreamDelta[];
  result?: StreamRoundResult;
  error?: unknown;
}

/** Runs one round to its end; `hold` is how long the consumer keeps each delta. */
async function run(
  client: OpenAI,
  opts: { signal?: AbortSignal; idleTimeoutMs?: number; hold?: number; onDelta?: (n: number) => void } = {},
): Promise<RoundRun> {
  const deltas: StreamDelta[] = [];
  const round = streamRound(client, body, {
    idleTimeoutMs: opts.idleTimeoutMs ?? 5_000,
    makeId: () => "call_fixed",
    ...(opts.signal ? { signal: opts.signal } : {}),
  });
  try {
    for (let next = await round.next(); ; next = await round.next()) {
      if (next.done) return { deltas, result: next.value };
      deltas.push(next.value);
      opts.onDelta?.(deltas.length);
      if (opts.hold) await new Promise((resolve) => setTimeout(resolve, opts.hold));
    }
  } catch (error) {
    return { deltas, error };
  }
}

/** What a caller can see of a ModelError. */
function seen(error: unknown): Record<string, unknown> {
  if (!(error instanceof ModelError)) return { notModelError: String(error) };
  const { code, retryable, status, retryAfterMs, excessTokens, message } = error;
  return { code, retryable, status, retryAfterMs, excessTokens, message };
}

describe("the node:http transport gives what the global fetch gives", () => {
  const answers: Array<[string, () => ResponsePlan]> = [
    ["a text answer", () => textAnswer("Hello there, how are you?", { reasoning: "The user greets." })],
    ["a tool call", () => toolCallAnswer([{ name: "get_weather", arguments: { city: "Paris" }, id: "call_1" }])],
    ["a text answer in 1–5 byte pieces", () => fragmented(textAnswer("Grüße aus Köln 😀, 你好"), 3, 5)],
    ["the scripted-chat capture", () => capture("scripted-chat_02_plain_stream_usage")],
    ["the tool-call capture", () => capture("scripted-tool1_06_tools_required_parallel_stream")],
  ];
  it.each(answers)("%s", async (_name, plan) => {
    fake.script([plan(), plan()]);
    const lean = await run(transport());
    const sdk = await run(undici());
    expect(lean.error).toBeUndefined();
    expect(lean).toEqual(sdk);
  });

  const faults: Array<[string, () => ResponsePlan]> = [
    ["llama.cpp's mid-stream error event", () => errorEventAfter(textAnswer("Inherits more text"), 1)],
    ["the mid-stream error capture (random_01)", () => capture("random_01_plain_stream")],
    ["context exceeded, HTTP 400 to a stream", () => contextExceeded()],
    ["the context-exceeded capture (random_27)", () => capture("random_27_error_context_exceeded_stream")],
    ["HTTP 500", () => serverError()],
    ["HTTP 429 with Retry-After", () => rateLimited(3)],
    ["HTTP 401", () => httpError(401, "Invalid API Key", "authentication_error")],
  ];
  it.each(faults)("%s: the same ModelError", async (_name, plan) => {
    fake.script([plan(), plan()]);
    const lean = await run(transport());
    const sdk = await run(undici());
    expect(lean.error).toBeInstanceOf(ModelError);
    expect(seen(lean.error)).toEqual(seen(sdk.error));
    expect(lean.deltas).toEqual(sdk.deltas);
  });

  it("a connection dropped mid-answer, or before any answer, has the same code", async () => {
    fake.script([
      dropAfter(textAnswer("The answer is coming"), 2),
      dropAfter(textAnswer("The answer is coming"), 2),
      destroyConnection(),
      destroyConnection(),
    ]);
    for (const code of ["stream-dropped", "unavailable"]) {
      const lean = await run(transport());
      const sdk = await run(undici());
      expect(seen(lean.error)).toMatchObject({ code, retryable: true });
      expect((lean.error as ModelError).code).toBe((sdk.error as ModelError).code);
      expect(lean.deltas).toEqual(sdk.deltas);
    }
  });
});

describe("aborts and the idle limit through the transport", () => {
  it("the user's abort mid-stream is an aborted outcome, and the connection is closed", async () => {
    fake.script([stallAfter(textAnswer("one two three four"), 2, 5_000)]);
    const stop = new AbortController();
    const got = await run(transport(), {
      signal: stop.signal,
      onDelta: (n) => n === 2 && setTimeout(() => stop.abort(), 20),
    });
    expect(got.error).toBeUndefined();
    expect(got.result?.aborted).toBe(true);
    expect(got.deltas.map((d) => d.text).join("")).toBe("one two");
    expect(await fake.requests[0]?.outcome).toBe("client-closed");
  });

  it("an abort before the headers is an aborted outcome too", async () => {
    fake.script([{ ...textAnswer("late"), headerDelayMs: 2_000 }]);
    const got = await run(transport(), { signal: AbortSignal.timeout(50) });
    expect(got.result?.aborted).toBe(true);
    expect(got.deltas).toEqual([]);
  });

  it("silence past the idle limit is a retryable timeout, and the connection is closed", async () => {
    fake.script([stallAfter(textAnswer("slow answer here"), 1, 5_000)]);
    const started = performance.now();
    const got = await run(transport(), { idleTimeoutMs: 150 });
    expect(seen(got.error)).toMatchObject({ code: "timeout", retryable: true });
    expect(performance.now() - started).toBeGreaterThanOrEqual(145);
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(await fake.requests[0]?.outcome).toBe("client-closed");
  });

  it("the consumer's time is not the server's silence: holding each delta past the idle limit is no timeout", async () => {
    fake.script([textAnswer("a b c d")]);
    const got = await run(transport(), { idleTimeoutMs: 80, hold: 150 });
    expect(got.error).toBeUndefined();
    expect(got.result).toMatchObject({ aborted: false, text: "a b c d" });
  });

  it("a stream whose gaps stay inside the limit is never cut, however long it runs in all", async () => {
    fake.script([{ ...textAnswer("one two three four five six seven eight"), tokensPerSecond: 25 }]);
    const got = await run(transport(), { idleTimeoutMs: 120 });
    expect(got.error).toBeUndefined();
    expect(got.result?.text).toBe("one two three four five six seven eight");
  });

  it("a consumer that stops early closes the connection", async () => {
    fake.script([stallAfter(textAnswer("one two three"), 1, 5_000)]);
    const round = streamRound(transport(), body, { idleTimeoutMs: 5_000 });
    expect((await round.next()).value).toEqual({ type: "text", text: "one" });
    await round.return(undefined as never);
    expect(await fake.requests[0]?.outcome).toBe("client-closed");
  });
});

describe("non-streamed requests through the transport", () => {
  it("a completion comes back parsed", async () => {
    fake.script([textAnswer("Just the JSON, please.")]);
    const completion = await transport().chat.completions.create({
      model: "m",
      messages: [{ role: "user", content: "?" }],
    });
    expect(completion.choices[0]?.message.content).toBe("Just the JSON, please.");
    expect(fake.requests[0]?.body.stream).not.toBe(true);
  });

  it("the summarizer's request works, and its context-exceeded 400 is the same ModelError", async () => {
    fake.script([textAnswer("They talked about the weather."), contextExceeded(6000, 4096)]);
    const summarize = createSummarizer({ client: transport(), model: "m", modelServer: "llama.cpp" });
    const request = { messages: [{ role: "user" as const, content: "Is it raining?" }], shared: false };
    expect(await summarize(request)).toBe("They talked about the weather.");
    const error = await summarize(request).catch((e: unknown) => e);
    expect(seen(error)).toMatchObject({ code: "context-exceeded", status: 400, excessTokens: 1904, retryable: false });
  });
});
