/**
 * Real llama-server bytes (test/agent/fixtures/llama-server) replayed through
 * HTTP + the openai SDK + the loop, and the fake's own output compared with
 * them event by event: if the fake drifts from reality, these fail.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ModelError } from "../../src/agent/model-error.js";
import { runAgent } from "../../src/agent/run-agent.js";
import {
  cutByLength,
  fragmented,
  renderSseText,
  replay,
  startFakeOpenAI,
  textAnswer,
  toolCallAnswer,
  type FakeOpenAI,
  type StreamPlan,
} from "../fakes/openai-server.js";
import { agentDeps, collect, finishOf, parseSse, streamedReasoning, streamedText, user } from "./agent-harness.js";
import { weatherTool, type Execution } from "./test-tools.js";

const dir = fileURLToPath(new URL("./fixtures/llama-server/", import.meta.url));
const fixture = (name: string, ext: "sse" | "headers") => readFileSync(`${dir}${name}.${ext}`, "utf8");
const replayFixture = (name: string) => replay(fixture(name, "headers"), fixture(name, "sse"));

let fake: FakeOpenAI;
beforeEach(async () => {
  fake = await startFakeOpenAI();
});
afterEach(async () => {
  await fake.close();
});

describe("captured llama-server streams through the SDK and the loop", () => {
  it("reasoning_content then content, usage chunk with empty choices (scripted-chat_02)", async () => {
    fake.script([replayFixture("scripted-chat_02_plain_stream_usage")]);
    const events = await collect(agentDeps(fake.url, []), [user("Hi")]);
    expect(streamedReasoning(events)).toBe("Okay, the user said hi.\n");
    expect(streamedText(events)).toBe("Hello there! How can I help you today?");
    expect(finishOf(events)).toMatchObject({
      reason: "stop",
      text: "Hello there! How can I help you today?",
      usage: { promptTokens: 9, completionTokens: 21 },
    });
  });

  it("the same bytes cut into 1–16 byte pieces give the same result", async () => {
    fake.script([fragmented(replayFixture("scripted-chat_02_plain_stream_usage"), 7, 16)]);
    const events = await collect(agentDeps(fake.url, []), [user("Hi")]);
    expect(streamedText(events)).toBe("Hello there! How can I help you today?");
    expect(streamedReasoning(events)).toBe("Okay, the user said hi.\n");
  });

  it("<think> tags inside content with --reasoning-format none (scripted-chat-rfnone_01)", async () => {
    fake.script([replayFixture("scripted-chat-rfnone_01_plain_stream")]);
    const events = await collect(agentDeps(fake.url, []), [user("Hi")]);
    expect(streamedReasoning(events)).toBe("Okay, the user said hi.\n");
    expect(streamedText(events)).toBe("Hello there! How can I help you today?");
    expect(finishOf(events).text).toBe("Hello there! How can I help you today?");
  });

  it("a real tool-call stream runs the tool with the arguments the model wrote (scripted-tool1_06)", async () => {
    const log: Execution[] = [];
    fake.script([
      replayFixture("scripted-tool1_06_tools_required_parallel_stream"),
      textAnswer("It is 18°C in Paris."),
    ]);
    const events = await collect(agentDeps(fake.url, [weatherTool(log, { Paris: 18 }, 1)]), [
      user("What's the weather and the time in Paris?"),
    ]);
    expect(log.map((e) => e.args)).toEqual([{ city: "Paris" }]);
    const assistant = fake.requests[1]?.body.messages?.[2];
    expect(assistant?.tool_calls).toEqual([
      {
        id: "eJYNOsu2OCUtG6yP8wImFoELNnWO8Mkd",
        type: "function",
        function: { name: "get_weather", arguments: '{"city": "Paris"}' },
      },
    ]);
    expect(fake.requests[1]?.body.messages?.[3]).toMatchObject({
      role: "tool",
      tool_call_id: "eJYNOsu2OCUtG6yP8wImFoELNnWO8Mkd",
    });
    expect(finishOf(events).reason).toBe("stop");
  });

  it("max_tokens hit inside reasoning is a cut answer (scripted-chat_24)", async () => {
    fake.script([replayFixture("scripted-chat_24_length_stream_usage")]);
    const finish = finishOf(await collect(agentDeps(fake.url, []), [user("Hi")]));
    expect(finish).toMatchObject({ reason: "length", text: "" });
  });

  it("the mid-stream error event is a retryable ModelError (random_01)", async () => {
    fake.script([replayFixture("random_01_plain_stream")]);
    const failure = await collect(agentDeps(fake.url, []), [user("Hi")]).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(ModelError);
    expect(failure).toMatchObject({ code: "stream-error", retryable: true });
  });

  it("context exceeded on a stream request is a plain JSON 400 (random_27)", async () => {
    fake.script([
      replay(
        fixture("random_27_error_context_exceeded_stream", "headers"),
        fixture("random_27_error_context_exceeded_stream", "sse"),
      ),
    ]);
    const failure = await collect(agentDeps(fake.url, []), [user("Hi")]).catch((e: unknown) => e);
    expect(failure).toMatchObject({ code: "context-exceeded", retryable: false, status: 400 });
  });
});

/** Event skeletons: key order and value kinds kept, values that legitimately vary (ids, text, numbers) masked. */
function skeleton(value: unknown, key = ""): unknown {
  if (Array.isArray(value)) return value.map((v) => skeleton(v));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, skeleton(v, k)]));
  }
  if (typeof value === "number") return key === "index" ? value : "<n>";
  if (typeof value === "string") {
    if (["object", "system_fingerprint", "type", "finish_reason", "role"].includes(key)) return value;
    return "<s>";
  }
  return value;
}

/** Skeletons with consecutive repeats folded: one token per chunk makes runs of equal shapes. */
function shape(sse: string): string[] {
  const out: string[] = [];
  for (const event of sse.split("\n\n").filter(Boolean)) {
    const data = event.replace(/^data: /, "");
    const s = data === "[DONE]" ? "[DONE]" : JSON.stringify(skeleton(JSON.parse(data)));
    if (out.at(-1) !== s) out.push(s);
  }
  return out;
}

describe("the fake frames streams exactly like llama-server", () => {
  const cases: [string, StreamPlan, boolean][] = [
    [
      "scripted-chat_02_plain_stream_usage",
      textAnswer("Hello there! How can I help you today?", { reasoning: "Okay, the user said hi.\n" }),
      true,
    ],
    ["scripted-chat_09_thinking_false_stream", textAnswer("Hello there! How can I help you today?"), false],
    ["scripted-chat_24_length_stream_usage", cutByLength(textAnswer("x", { reasoning: "Okay, the user" }), 2), true],
    [
      "scripted-tool1_06_tools_required_parallel_stream",
      toolCallAnswer([{ name: "get_weather", arguments: { city: "Paris" } }], {
        reasoning: "Okay, the user wants the weather in Paris.\n",
      }),
      true,
    ],
    [
      "scripted-chat-rfnone_01_plain_stream",
      textAnswer("Hello there! How can I help you today?", {
        reasoning: "Okay, the user said hi.\n",
        reasoningStyle: "think-tags",
      }),
      false,
    ],
  ];
  it.each(cases)("%s", (name, plan, includeUsage) => {
    const real = fixture(name, "sse");
    const ours = renderSseText(plan, { includeUsage });
    expect(shape(ours)).toEqual(shape(real));
    // Same framing byte for byte: `data: ` + compact JSON + blank line, nothing else.
    expect(ours.replace(/data: (\{.*\}|\[DONE\])\n\n/g, "")).toBe("");
    expect(real.replace(/data: (\{.*\}|\[DONE\])\n\n/g, "")).toBe("");
    // The tool-call fragments have the same keys in the same places (first: index,id,type,function{name,arguments}).
    const fragments = (sse: string) =>
      parseSse(sse).flatMap((c) =>
        (c.choices[0]?.delta.tool_calls ?? []).map(
          (f) => JSON.stringify(Object.keys(f)) + JSON.stringify(Object.keys(f.function ?? {})),
        ),
      );
    expect([...new Set(fragments(ours))]).toEqual([...new Set(fragments(real))]);
  });

  it("headers of a stream and of an error match the capture", async () => {
    fake.script([
      textAnswer("hi"),
      { kind: "error", status: 400, error: { code: 400, message: "x", type: "exceed_context_size_error" } },
    ]);
    const post = () =>
      fetch(`${fake.url}/chat/completions`, { method: "POST", body: JSON.stringify({ messages: [], stream: true }) });
    const stream = await post();
    await stream.text();
    for (const [name, value] of [
      ["server", "llama.cpp"],
      ["content-type", "text/event-stream"],
      ["x-accel-buffering", "no"],
      ["access-control-allow-origin", ""],
      ["transfer-encoding", "chunked"],
    ]) {
      expect(stream.headers.get(name as string)).toBe(value);
    }
    const error = await post();
    expect(error.status).toBe(400);
    expect(error.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(error.headers.get("connection")).toBe("close");
    expect(await error.json()).toEqual({ error: { code: 400, message: "x", type: "exceed_context_size_error" } });
  });

  it("serves /v1/models and /health like llama-server, and llama's 400 for a body without messages", async () => {
    expect(await (await fetch(`${fake.origin}/health`)).json()).toEqual({ status: "ok" });
    const models = (await (await fetch(`${fake.url}/models`)).json()) as {
      object: string;
      data: { id: string; owned_by: string }[];
    };
    expect(models.object).toBe("list");
    expect(models.data[0]?.owned_by).toBe("llamacpp");
    const bad = await fetch(`${fake.url}/chat/completions`, { method: "POST", body: JSON.stringify({ model: "x" }) });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({
      error: { code: 400, message: "'messages' is required", type: "invalid_request_error" },
    });
  });

  it("a runAgent consumer that stops early closes the request", async () => {
    fake.script([{ ...textAnswer("one two three four five six"), tokensPerSecond: 50 }]);
    for await (const event of runAgent(agentDeps(fake.url, []), { messages: [user("Hi")] })) {
      if (event.type === "text-delta") break;
    }
    expect(await fake.requests[0]?.outcome).toBe("client-closed");
  });
});
