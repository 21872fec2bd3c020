/**
 * The model client (the openai SDK on undici's request(), its own SSE Stream) through streamRound, over the
 * fake llama.cpp server: answers come out whole, faults as a ModelError that says what happened, and
 * aborts and the idle limit end the request.
 */
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
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

const client = (): OpenAI => createModelClient({ baseURL: fake.url, apiKey: "sk-test", timeoutMs: 5_000 });
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

describe("answers and faults through the SDK's own streaming", () => {
  const answers: Array<[string, () => ResponsePlan, string]> = [
    [
      "a text answer",
      () => textAnswer("Hello there, how are you?", { reasoning: "The user greets." }),
      "Hello there, how are you?",
    ],
    [
      "a text answer in 1–5 byte pieces",
      () => fragmented(textAnswer("Grüße aus Köln 😀, 你好"), 3, 5),
      "Grüße aus Köln 😀, 你好",
    ],
  ];
  it.each(answers)("%s", async (_name, plan, text) => {
    fake.script([plan()]);
    const got = await run(client());
    expect(got.error).toBeUndefined();
    expect(got.result).toMatchObject({ aborted: false, text });
  });

  it("a tool call comes out whole", async () => {
    fake.script([toolCallAnswer([{ name: "get_weather", arguments: { city: "Paris" }, id: "call_1" }])]);
    const got = await run(client());
    expect(got.error).toBeUndefined();
    expect(got.result?.toolCalls).toMatchObject([
      { id: "call_1", function: { name: "get_weather", arguments: '{"city": "Paris"}' } },
    ]);
  });

  it("the llama-server captures stream to their end", async () => {
    fake.script([
      capture("scripted-chat_02_plain_stream_usage"),
      capture("scripted-tool1_06_tools_required_parallel_stream"),
    ]);
    const chat = await run(client());
    expect(chat.error).toBeUndefined();
    expect(chat.result?.text.length).toBeGreaterThan(0);
    expect(chat.result?.usage).toBeDefined();
    const tools = await run(client());
    expect(tools.error).toBeUndefined();
    expect(tools.result?.finishReason).toBe("tool_calls");
    expect(tools.result?.toolCalls.length).toBeGreaterThan(0);
  });

  const faults: Array<[string, () => ResponsePlan, Record<string, unknown>]> = [
    [
      "llama.cpp's mid-stream error event",
      () => errorEventAfter(textAnswer("Inherits more text"), 1),
      { code: "stream-error", retryable: true },
    ],
    [
      "the mid-stream error capture (random_01)",
      () => capture("random_01_plain_stream"),
      { code: "stream-error", retryable: true },
    ],
    [
      "context exceeded, HTTP 400 to a stream",
      () => contextExceeded(),
      { code: "context-exceeded", retryable: false, excessTokens: 913 },
    ],
    [
      "the context-exceeded capture (random_27)",
      () => capture("random_27_error_context_exceeded_stream"),
      { code: "context-exceeded", retryable: false, status: 400 },
    ],
    ["HTTP 500", () => serverError(), { code: "server-error", retryable: true, status: 500 }],
    ["HTTP 429 with Retry-After", () => rateLimited(3), { code: "rate-limited", retryable: true, retryAfterMs: 3000 }],
    [
      "HTTP 401",
      () => httpError(401, "Invalid API Key", "authentication_error"),
      { code: "auth", retryable: false, status: 401 },
    ],
  ];
  it.each(faults)("%s: a ModelError that says what happened", async (_name, plan, expected) => {
    fake.script([plan()]);
    const got = await run(client());
    expect(got.error).toBeInstanceOf(ModelError);
    expect(seen(got.error)).toMatchObject(expected);
  });

  it("a connection dropped mid-answer, or before any answer, is retryable", async () => {
    fake.script([dropAfter(textAnswer("The answer is coming"), 2), destroyConnection()]);
    const dropped = await run(client());
    expect(seen(dropped.error)).toMatchObject({ code: "stream-dropped", retryable: true });
    expect(dropped.deltas.map((d) => d.text).join("")).toBe("The answer");
    const refused = await run(client());
    expect(seen(refused.error)).toMatchObject({ code: "unavailable", retryable: true });
    expect(refused.deltas).toEqual([]);
  });
});

describe("aborts and the idle limit", () => {
  it("the user's abort mid-stream is an aborted outcome, and the connection is closed", async () => {
    fake.script([stallAfter(textAnswer("one two three four"), 2, 5_000)]);
    const stop = new AbortController();
    const got = await run(client(), {
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
    const got = await run(client(), { signal: AbortSignal.timeout(50) });
    expect(got.result?.aborted).toBe(true);
    expect(got.deltas).toEqual([]);
  });

  it("silence past the idle limit is a retryable timeout, and the connection is closed", async () => {
    fake.script([stallAfter(textAnswer("slow answer here"), 1, 5_000)]);
    const started = performance.now();
    const got = await run(client(), { idleTimeoutMs: 150 });
    expect(seen(got.error)).toMatchObject({ code: "timeout", retryable: true });
    expect(performance.now() - started).toBeGreaterThanOrEqual(145);
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(await fake.requests[0]?.outcome).toBe("client-closed");
  });

  it("the consumer's time is not the server's silence: holding each delta past the idle limit is no timeout", async () => {
    fake.script([textAnswer("a b c d")]);
    const got = await run(client(), { idleTimeoutMs: 80, hold: 150 });
    expect(got.error).toBeUndefined();
    expect(got.result).toMatchObject({ aborted: false, text: "a b c d" });
  });

  it("a stream whose gaps stay inside the limit is never cut, however long it runs in all", async () => {
    fake.script([{ ...textAnswer("one two three four five six seven eight"), tokensPerSecond: 25 }]);
    const got = await run(client(), { idleTimeoutMs: 120 });
    expect(got.error).toBeUndefined();
    expect(got.result?.text).toBe("one two three four five six seven eight");
  });

  it("a consumer that stops early closes the connection", async () => {
    fake.script([stallAfter(textAnswer("one two three"), 1, 5_000)]);
    const round = streamRound(client(), body, { idleTimeoutMs: 5_000 });
    expect((await round.next()).value).toEqual({ type: "text", text: "one" });
    await round.return(undefined as never);
    expect(await fake.requests[0]?.outcome).toBe("client-closed");
  });
});

describe("the request itself", () => {
  it("carries the key, the JSON body and the SDK's headers to the server", async () => {
    fake.script([textAnswer("ok")]);
    await run(client());
    const request = fake.requests[0];
    expect(request?.headers.authorization).toBe("Bearer sk-test");
    expect(request?.headers["content-type"]).toBe("application/json");
    expect(request?.body).toMatchObject({ model: "m", stream: true, messages: [{ role: "user", content: "Hi" }] });
  });

  it("a redirect is not followed: the other host gets nothing, and the round fails as the server's answer", async () => {
    let otherHostAsked = 0;
    const other = createServer((_req, res) => {
      otherHostAsked += 1;
      res.end();
    });
    const redirecting = createServer((_req, res) => {
      res.writeHead(307, { location: `http://127.0.0.1:${(other.address() as AddressInfo).port}/v1/chat/completions` });
      res.end();
    });
    for (const server of [other, redirecting]) {
      server.listen(0, "127.0.0.1");
      await once(server, "listening");
    }
    try {
      const url = `http://127.0.0.1:${(redirecting.address() as AddressInfo).port}/v1`;
      const got = await run(createModelClient({ baseURL: url, apiKey: "sk-test", timeoutMs: 5_000 }));
      expect(seen(got.error)).toMatchObject({ status: 307 });
      expect(otherHostAsked).toBe(0);
    } finally {
      await Promise.all([other, redirecting].map((s) => new Promise((resolve) => s.close(resolve))));
    }
  });
});

describe("non-streamed requests", () => {
  it("a completion comes back parsed", async () => {
    fake.script([textAnswer("Just the JSON, please.")]);
    const completion = await client().chat.completions.create({
      model: "m",
      messages: [{ role: "user", content: "?" }],
    });
    expect(completion.choices[0]?.message.content).toBe("Just the JSON, please.");
    expect(fake.requests[0]?.body.stream).not.toBe(true);
  });

  it("the summarizer's request works, and its context-exceeded 400 is the same ModelError", async () => {
    fake.script([textAnswer("They talked about the weather."), contextExceeded(6000, 4096)]);
    const summarize = createSummarizer({ client: client(), model: "m", modelServer: "llama.cpp" });
    const request = { messages: [{ role: "user" as const, content: "Is it raining?" }], shared: false };
    expect(await summarize(request)).toBe("They talked about the weather.");
    const error = await summarize(request).catch((e: unknown) => e);
    expect(seen(error)).toMatchObject({ code: "context-exceeded", status: 400, excessTokens: 1904, retryable: false });
  });
});
