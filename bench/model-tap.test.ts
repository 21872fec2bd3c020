import { afterEach, describe, expect, it } from "vitest";
import { startFakeOpenAI, type FakeOpenAI } from "../test/fakes/openai-server.js";
import { benchModelHandler, questionText } from "./model-script.js";
import { createStreamReader, startModelTap, type ModelTap } from "./model-tap.js";
import type { ModelStream } from "./conversation-figures.js";

let model: FakeOpenAI | undefined;
let tap: ModelTap | undefined;

afterEach(async () => {
  await tap?.close();
  await model?.close();
  tap = model = undefined;
});

/** An answering-round request (the tool result is in, so the fake writes the answer). */
const answerRequest = (conversation: number) =>
  JSON.stringify({
    model: "qwen3-1.7b",
    stream: true,
    messages: [
      { role: "user", content: questionText(conversation) },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "a", type: "function", function: { name: "get_weather", arguments: "{}" } }],
      },
      { role: "tool", tool_call_id: "a", content: "{}" },
    ],
  });

describe("the model tap", () => {
  it("passes the stream through unchanged and notes when each answer word left the model", async () => {
    model = await startFakeOpenAI(benchModelHandler({ answerWords: () => 12, tokensPerSecond: 200 }));
    tap = await startModelTap({ upstreamPort: model.port });
    const started = Date.now();
    const viaTap = await (
      await fetch(`${tap.url}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: answerRequest(7),
      })
    ).text();
    // The same request straight to the model: the same events (ids and timings aside).
    const direct = await (
      await fetch(`${model.url}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: answerRequest(7),
      })
    ).text();
    const shape = (sse: string) => sse.replace(/"(id|created)":("[^"]*"|\d+)/g, "").replace(/"timings":\{[^}]*\}/g, "");
    expect(shape(viaTap)).toBe(shape(direct));
    expect(viaTap).toContain("w12");
    expect(viaTap.trimEnd().endsWith("data: [DONE]")).toBe(true);

    const stream = tap.streams.get(7) as ModelStream;
    expect(stream.tokens).toBe(12);
    const times = stream.answerAt.slice(1);
    expect(times).toHaveLength(12);
    // Paced at 200 tokens/s: 5 ms apart, in order, after the request, and the finish after the last word.
    for (let k = 1; k < times.length; k++) expect(times[k]!).toBeGreaterThanOrEqual(times[k - 1]!);
    expect(times[11]! - times[0]!).toBeGreaterThanOrEqual(40);
    expect(times[0]!).toBeGreaterThanOrEqual(started);
    expect(stream.finishAt!).toBeGreaterThanOrEqual(times[11]!);
  });

  it("attributes each response on a kept-alive connection to the conversation of its request", () => {
    const streams = new Map<number, ModelStream>();
    const reader = createStreamReader(streams, () => 1000);
    const event = (json: string) => `data: ${json}\n\n`;
    const chunked = (body: string) => `${Buffer.byteLength(body).toString(16)}\r\n${body}\r\n`;
    reader.request(
      Buffer.from(
        `POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\n\r\n{"messages":[{"role":"user","content":"conv-3: hi"}`,
      ),
    );
    reader.request(Buffer.from(`]}`));
    const first = chunked(event('{"choices":[{"finish_reason":null,"index":0,"delta":{"content":" w1"}}]}'));
    // An event cut between two reads is still read once, whole.
    reader.response(Buffer.from(`HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n${first.slice(0, 30)}`));
    reader.response(
      Buffer.from(first.slice(30) + chunked(event('{"choices":[{"finish_reason":"stop","index":0,"delta":{}}]}'))),
    );
    // The next request on the connection belongs to another conversation (whose tag arrives split).
    reader.request(Buffer.from(`POST /v1/chat/completions HTTP/1.1\r\n\r\n{"messages":[{"role":"user","content":"co`));
    reader.request(Buffer.from(`nv-4: hi"}]}`));
    reader.response(
      Buffer.from(
        chunked(
          event(
            '{"choices":[{"finish_reason":null,"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{"}}]}}]}',
          ),
        ),
      ),
    );
    reader.response(
      Buffer.from(chunked(event('{"choices":[{"finish_reason":null,"index":0,"delta":{"content":" w1"}}]}'))),
    );

    expect(streams.get(3)).toEqual({ tokens: 1, answerAt: [undefined, 1000], finishAt: 1000 });
    expect(streams.get(4)).toEqual({ tokens: 2, answerAt: [undefined, 1000] });
  });
});
