/** The accumulator, fed chunk objects directly: each server quirk on its own. */
import { readFileSync } from "node:fs";
import type { ChatCompletionChunk } from "openai/resources/chat/completions";
import { describe, expect, it } from "vitest";
import {
  createStreamAccumulator,
  type StreamAccumulatorOptions,
  type StreamDelta,
} from "../../src/agent/stream-accumulator.js";
import {
  cutByLength,
  renderSseText,
  textAnswer,
  textualToolCallAnswer,
  toolCallAnswer,
  withFinish,
  type FakeDelta,
  type StreamPlan,
} from "../fakes/openai-server.js";
import { parseSse } from "./agent-harness.js";

function chunk(delta: FakeDelta | Record<string, unknown>, finish: string | null = null): ChatCompletionChunk {
  return {
    id: "chatcmpl-x",
    object: "chat.completion.chunk",
    created: 0,
    model: "m",
    choices: [
      {
        index: 0,
        delta: delta as ChatCompletionChunk.Choice.Delta,
        finish_reason: finish as ChatCompletionChunk.Choice["finish_reason"],
      },
    ],
  };
}

function run(chunks: ChatCompletionChunk[], opts: StreamAccumulatorOptions = {}) {
  let n = 0;
  const acc = createStreamAccumulator({ makeId: () => `gen_${n++}`, ...opts });
  const deltas: StreamDelta[] = [];
  for (const c of chunks) deltas.push(...acc.push(c));
  const end = acc.end();
  deltas.push(...end.deltas);
  const join = (type: StreamDelta["type"]) =>
    deltas
      .filter((d) => d.type === type)
      .map((d) => d.text)
      .join("");
  return { ...end.outcome, shownText: join("text"), shownReasoning: join("reasoning"), deltas };
}

function runPlan(plan: StreamPlan, opts: StreamAccumulatorOptions = {}) {
  return run(parseSse(renderSseText(plan, { includeUsage: true })), opts);
}

describe("tool-call fragments", () => {
  it("id/type/name only in the first fragment; arguments concatenated, unparsed", () => {
    const r = runPlan(toolCallAnswer([{ name: "get_weather", arguments: { city: "Paris" }, id: "abc" }]));
    expect(r.toolCalls).toEqual([
      { id: "abc", type: "function", function: { name: "get_weather", arguments: '{"city": "Paris"}' } },
    ]);
    expect(r.finishReason).toBe("tool_calls");
  });

  it("interleaved fragments of parallel calls land in the right call", () => {
    const r = runPlan(
      toolCallAnswer(
        [
          { name: "get_weather", arguments: { city: "北京" }, id: "a" },
          { name: "get_time", arguments: { timezone: "Asia/Shanghai" }, id: "b" },
          { name: "get_weather", arguments: { city: "上海" }, id: "c" },
        ],
        { interleave: true },
      ),
    );
    expect(r.toolCalls.map((c) => [c.id, c.function.name, JSON.parse(c.function.arguments)])).toEqual([
      ["a", "get_weather", { city: "北京" }],
      ["b", "get_time", { timezone: "Asia/Shanghai" }],
      ["c", "get_weather", { city: "上海" }],
    ]);
  });

  it("a server repeating id, type and name in every fragment does not double them", () => {
    const r = run([
      chunk({ tool_calls: [{ index: 0, id: "x1", type: "function", function: { name: "get_time", arguments: "{" } }] }),
      chunk({ tool_calls: [{ index: 0, id: "x1", type: "function", function: { name: "get_time", arguments: "}" } }] }),
      chunk({}, "tool_calls"),
    ]);
    expect(r.toolCalls).toEqual([{ id: "x1", type: "function", function: { name: "get_time", arguments: "{}" } }]);
  });

  it("a call with a new index and no id gets a generated id; fragments without index follow the call they continue", () => {
    const r = run([
      chunk({ tool_calls: [{ index: 0, function: { name: "get_time", arguments: '{"timezone"' } }] }),
      chunk({ tool_calls: [{ function: { arguments: ': "UTC"}' } }] }),
      chunk({ tool_calls: [{ id: "later", function: { name: "get_weather", arguments: '{"city": "Rome"}' } }] }),
      chunk({}, "tool_calls"),
    ]);
    expect(r.toolCalls).toEqual([
      { id: "gen_0", type: "function", function: { name: "get_time", arguments: '{"timezone": "UTC"}' } },
      { id: "later", type: "function", function: { name: "get_weather", arguments: '{"city": "Rome"}' } },
    ]);
  });

  it("length: started calls are dropped, never run as if whole", () => {
    const r = runPlan(cutByLength(toolCallAnswer([{ name: "get_weather", arguments: { city: "Paris" } }]), 4));
    expect(r.toolCalls).toEqual([]);
    expect(r.droppedToolCalls).toBe(1);
    expect(r.finishReason).toBe("length");
  });

  it("stop instead of tool_calls, and no finish_reason at all, still yield the calls", () => {
    const plan = toolCallAnswer([{ name: "get_time", arguments: {} }]);
    expect(runPlan(withFinish(plan, "stop"))).toMatchObject({ finishReason: "tool_calls", serverFinishReason: "stop" });
    expect(runPlan(withFinish(plan, null))).toMatchObject({ finishReason: "tool_calls", serverFinishReason: null });
    expect(runPlan(withFinish(plan, null)).toolCalls).toHaveLength(1);
  });
});

describe("reasoning in its three forms never leaks into the answer", () => {
  const answer = "Hello there!";
  it.each(["reasoning_content", "reasoning", "think-tags"] as const)("%s", (style) => {
    for (const splitTags of [false, true]) {
      const r = runPlan(
        textAnswer(answer, { reasoning: "Okay, the user said hi.\n", reasoningStyle: style, splitTags }),
      );
      expect(r.text).toBe(answer);
      expect(r.shownText).toBe(answer);
      expect(r.shownReasoning).toBe("Okay, the user said hi.\n");
      expect(r.reasoning).toBe("Okay, the user said hi.\n");
    }
  });

  it("a server sending both reasoning keys with the same text shows it once", () => {
    const r = run([
      chunk({ reasoning_content: "Hmm", reasoning: "Hmm" }),
      chunk({ content: "Yes" }),
      chunk({}, "stop"),
    ]);
    expect(r.shownReasoning).toBe("Hmm");
    expect(r.text).toBe("Yes");
  });

  it("a tag split over three chunks (`</` `think` `>`) and a `<` that is no tag", () => {
    const r = run([
      chunk({ content: "<th" }),
      chunk({ content: "ink>a < b" }),
      chunk({ content: "</" }),
      chunk({ content: "think" }),
      chunk({ content: ">\n\nx <y and <th" }),
      chunk({}, "stop"),
    ]);
    expect(r.reasoning).toBe("a < b");
    expect(r.text).toBe("x <y and <th");
    expect(r.shownText).toBe("x <y and <th");
  });

  it("a pre-opened template (only `</think>` appears) with startInReasoning: nothing leaks at all", () => {
    const r = runPlan(
      textAnswer("答案是 42。", { reasoning: "先想一想。", reasoningStyle: "think-preopened", splitTags: true }),
      {
        startInReasoning: true,
      },
    );
    expect(r.shownReasoning).toBe("先想一想。");
    expect(r.shownText).toBe("答案是 42。");
    expect(r.text).toBe("答案是 42。");
  });

  it("a pre-opened template without the option: the stored answer still excludes the reasoning", () => {
    const r = runPlan(textAnswer("答案是 42。", { reasoning: "先想一想。", reasoningStyle: "think-preopened" }));
    expect(r.text).toBe("答案是 42。");
  });

  it("startInReasoning is ignored once the server already split reasoning out", () => {
    const r = runPlan(textAnswer("Hi!", { reasoning: "thinking", reasoningStyle: "reasoning_content" }), {
      startInReasoning: true,
    });
    expect(r.text).toBe("Hi!");
    expect(r.shownText).toBe("Hi!");
  });

  it("a round cut inside reasoning has an empty answer (llama.cpp fixture 24)", () => {
    const r = runPlan(
      cutByLength(textAnswer("Hello", { reasoning: "Okay, the user", reasoningStyle: "think-tags" }), 3),
    );
    expect(r).toMatchObject({ text: "", finishReason: "length" });
    expect(r.shownText).toBe("");
  });
});

describe("textual <tool_call> blocks", () => {
  it("several in a row, tags split across chunks, after reasoning and a preamble", () => {
    const r = runPlan(
      textualToolCallAnswer(
        [
          { name: "get_weather", arguments: { city: "Paris" } },
          { name: "get_time", arguments: { timezone: "Europe/Paris" } },
        ],
        { reasoning: "Need both.", splitTags: true, preamble: "Let me check." },
      ),
    );
    expect(r.toolCalls.map((c) => [c.function.name, JSON.parse(c.function.arguments)])).toEqual([
      ["get_weather", { city: "Paris" }],
      ["get_time", { timezone: "Europe/Paris" }],
    ]);
    expect(r.toolCalls.map((c) => c.id)).toEqual(["gen_0", "gen_1"]);
    expect(r.text).toBe("Let me check.");
    expect(r.shownText).not.toContain("<");
    expect(r.finishReason).toBe("tool_calls");
  });

  it("a <tool_call> opened inside the thinking block ends the reasoning (Qwen3.5 templates)", () => {
    const r = run([
      chunk({ content: "<think>I will call it" }),
      chunk({ content: '<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>' }),
      chunk({}, "stop"),
    ]);
    expect(r.reasoning).toBe("I will call it");
    expect(r.toolCalls).toEqual([{ id: "gen_0", type: "function", function: { name: "get_time", arguments: "{}" } }]);
  });

  it("a block holding an array of calls, and one with string arguments", () => {
    const r = run([
      chunk({
        content:
          '<tool_call>[{"name": "a", "arguments": {"x": 1}}, {"name": "b", "arguments": "{\\"y\\": 2}"}]</tool_call>',
      }),
      chunk({}, "stop"),
    ]);
    expect(r.toolCalls.map((c) => [c.function.name, c.function.arguments])).toEqual([
      ["a", '{"x":1}'],
      ["b", '{"y": 2}'],
    ]);
  });

  it("a block that is not JSON still becomes a call, so the model hears what was wrong", () => {
    const r = run([
      chunk({ content: '<tool_call>{"name": "get_weather", "arguments": {city: Paris}}</tool_call>' }),
      chunk({}, "stop"),
    ]);
    expect(r.toolCalls).toHaveLength(1);
    expect(r.toolCalls[0]?.function.name).toBe("get_weather");
    expect(() => JSON.parse(r.toolCalls[0]?.function.arguments ?? "")).toThrow();
  });

  it("an unclosed block: accepted on stop when it is whole JSON, dropped on length", () => {
    const whole = [chunk({ content: '<tool_call>\n{"name": "get_time", "arguments": {}}' })];
    expect(run([...whole, chunk({}, "stop")]).toolCalls).toHaveLength(1);
    const cut = run([...whole, chunk({}, "length")]);
    expect(cut.toolCalls).toHaveLength(0);
    expect(cut.droppedToolCalls).toBe(1);
    expect(run([chunk({ content: '<tool_call>\n{"name": "get_ti' }), chunk({}, "stop")]).toolCalls).toHaveLength(0);
  });
});

describe("finish and usage", () => {
  it("the usage chunk with empty choices is read; stop is stop", () => {
    const r = runPlan(textAnswer("Hi"));
    expect(r.finishReason).toBe("stop");
    expect(r.usage).toEqual({ promptTokens: 10, completionTokens: 1, cachedTokens: 0, promptMs: 3 });
  });

  it("reads what a real llama-server took from its prompt cache (timings.cache_n, cached_tokens)", () => {
    const captured = readFileSync(
      new URL("./fixtures/llama-server/scripted-chat_02_plain_stream_usage.sse", import.meta.url),
      "utf8",
    );
    const chunks = captured
      .split("\n")
      .filter((line) => line.startsWith("data: {"))
      .map((line) => JSON.parse(line.slice(6)) as ChatCompletionChunk);
    expect(run(chunks).usage).toEqual({ promptTokens: 9, completionTokens: 21, cachedTokens: 8, promptMs: 53.218 });
    // Timings alone (a server that sends no usage chunk) still say it.
    const timingsOnly = { ...chunk({}, "stop"), timings: { cache_n: 100, prompt_n: 5, predicted_n: 3 } };
    expect(run([timingsOnly as ChatCompletionChunk]).usage).toEqual({
      promptTokens: 105,
      completionTokens: 3,
      cachedTokens: 100,
    });
  });

  it("no finish_reason and no calls is 'unknown' (the loop treats it as the answer)", () => {
    expect(runPlan(withFinish(textAnswer("Hi"), null))).toMatchObject({ finishReason: "unknown", text: "Hi" });
  });
});
