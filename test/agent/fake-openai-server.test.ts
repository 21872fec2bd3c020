/** The fake model server itself: the behaviours other suites rely on. */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createModelClient } from "../../src/agent/model-client.js";
import {
  fragmented,
  paced,
  startFakeOpenAI,
  textAnswer,
  toolCallAnswer,
  type FakeOpenAI,
} from "../fakes/openai-server.js";

let fake: FakeOpenAI;
beforeEach(async () => {
  fake = await startFakeOpenAI();
});
afterEach(async () => {
  await fake.close();
});

const post = (body: unknown) => fetch(`${fake.url}/chat/completions`, { method: "POST", body: JSON.stringify(body) });

describe("fake OpenAI-compatible server", () => {
  it('answers stream:false with one llama.cpp completion object (tool calls with content "")', async () => {
    fake.script([
      toolCallAnswer([{ name: "get_weather", arguments: { city: "Paris" }, id: "abc" }], { reasoning: "Hmm." }),
    ]);
    const client = createModelClient({ baseURL: fake.url, apiKey: "sk-test", timeoutMs: 5_000 });
    const completion = await client.chat.completions.create({ model: "m", messages: [{ role: "user", content: "?" }] });
    expect(completion.object).toBe("chat.completion");
    expect(completion.choices[0]?.finish_reason).toBe("tool_calls");
    expect(completion.choices[0]?.message).toMatchObject({
      role: "assistant",
      content: "",
      reasoning_content: "Hmm.",
      tool_calls: [{ type: "function", function: { name: "get_weather", arguments: '{"city": "Paris"}' }, id: "abc" }],
    });
    expect(Object.keys(completion)).toEqual([
      "choices",
      "created",
      "model",
      "system_fingerprint",
      "object",
      "usage",
      "id",
      "timings",
    ]);
  });

  it("records each chat request with its parsed body, in order", async () => {
    fake.setHandler(() => textAnswer("ok"));
    await (await post({ model: "a", messages: [{ role: "user", content: "1" }], stream: true })).text();
    await (
      await post({ model: "b", messages: [], stream: true, chat_template_kwargs: { enable_thinking: false } })
    ).text();
    expect(fake.requests.map((r) => [r.index, r.body.model])).toEqual([
      [0, "a"],
      [1, "b"],
    ]);
    expect(fake.requests[1]?.body.chat_template_kwargs).toEqual({ enable_thinking: false });
    expect(await fake.requests[0]?.outcome).toBe("completed");
  });

  it("a request beyond the script fails loudly instead of hanging", async () => {
    fake.script([textAnswer("only one")]);
    await (await post({ messages: [], stream: true })).text();
    expect(fake.remaining).toBe(0);
    const extra = await post({ messages: [], stream: true });
    expect(extra.status).toBe(500);
    expect(JSON.stringify(await extra.json())).toContain("no response scripted");
  });

  it("a malformed body gets llama.cpp's 500 parse error", async () => {
    const response = await fetch(`${fake.url}/chat/completions`, {
      method: "POST",
      body: '{"model": "qwen3", "messages": [',
    });
    expect(response.status).toBe(500);
    expect(await response.json()).toMatchObject({
      error: { code: 500, type: "server_error", message: expect.stringContaining("parse error") },
    });
  });

  it("paces tokens at the requested speed", async () => {
    fake.script([paced(textAnswer("one two three four five six"), 100)]);
    const reader = (await post({ messages: [], stream: true })).body?.getReader();
    const arrivals: number[] = [];
    let text = "";
    const decoder = new TextDecoder();
    for (;;) {
      const { done, value } = (await reader?.read()) ?? { done: true, value: undefined };
      if (done) break;
      const part = decoder.decode(value, { stream: true });
      if (part.includes('"content":"')) arrivals.push(performance.now());
      text += part;
    }
    expect(text.endsWith("data: [DONE]\n\n")).toBe(true);
    // Six tokens at 100/s: at least ~50 ms from the first to the last.
    expect((arrivals.at(-1) ?? 0) - (arrivals[0] ?? 0)).toBeGreaterThan(40);
  });

  it("fragmentation really reaches the client as many small reads that split UTF-8 characters", async () => {
    fake.script([fragmented(textAnswer("北京和上海今天哪里更热"), 3, 4)]);
    const reader = (await post({ messages: [], stream: true })).body?.getReader();
    const reads: Uint8Array[] = [];
    for (;;) {
      const { done, value } = (await reader?.read()) ?? { done: true, value: undefined };
      if (done || !value) break;
      reads.push(value);
    }
    // Pieces of at most 4 bytes; the client may coalesce a few, but never back into whole events.
    expect(reads.length).toBeGreaterThan(50);
    const splitsACharacter = reads.some((r) => {
      const last = r[r.length - 1] ?? 0;
      return last >= 0xe0 || (last & 0xc0) === 0x80; // ends with a lead or continuation byte of a 3-byte character
    });
    expect(splitsACharacter).toBe(true);
    expect(Buffer.concat(reads).toString("utf8")).toContain('"content":"北"');
  });
});
