/**
 * Property: how a valid stream is cut never changes what it means. The same
 * model output, re-cut into different deltas (SSE-event level: tags, words,
 * JSON and CJK split anywhere) or into different byte pieces on the wire
 * (splitting SSE lines and UTF-8 characters), yields the same text, reasoning
 * and tool calls.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createModelClient } from "../../src/agent/model-client.js";
import { createStreamAccumulator, type RoundOutcome } from "../../src/agent/stream-accumulator.js";
import { streamRound } from "../../src/agent/stream-round.js";
import {
  modelJson,
  renderSseText,
  startFakeOpenAI,
  type FakeOpenAI,
  type FakeToolCallFragment,
  type ReasoningStyle,
  type StreamPlan,
  type StreamStep,
} from "../fakes/openai-server.js";
import { cutAt } from "../support/cut-points.js";
import { parseSse } from "./agent-harness.js";

interface Call {
  name: string;
  args: Record<string, string | number>;
  id: string | undefined;
}

/** A model output: what it means, independent of how it is cut. */
interface Output {
  reasoning: string | undefined;
  style: ReasoningStyle;
  answer: string;
  calls: Call[];
  textual: boolean;
  finish: boolean;
}

const TAGS = ["<think>", "</think>", "<tool_call>", "</tool_call>"];
const noTags = (s: string) => !TAGS.some((t) => s.includes(t));
// An alphabet that makes near-tags (`<th`, `</`, `<tool`), CJK, emoji and JSON-hostile characters likely.
const piece = fc.constantFrom(
  "<",
  "</",
  "<th",
  "ink>",
  "<tool",
  "_call>",
  "think",
  ">",
  "北京",
  "天气",
  "😀",
  " ",
  "\n",
  "a",
  "b1",
  '"',
  "\\",
  "{",
  "}",
  ",",
  "é",
);
const textArb = fc
  .array(piece, { maxLength: 25 })
  .map((p) => p.join(""))
  .filter(noTags);
const callArb = fc.record({
  name: fc.constantFrom("get_weather", "get_news", "get_time", "read_url"),
  args: fc.dictionary(
    fc.constantFrom("city", "topic", "url", "n"),
    fc.oneof(textArb, fc.integer({ min: -5, max: 99 })),
    { maxKeys: 3 },
  ),
  id: fc.option(fc.stringMatching(/^[A-Za-z0-9]{8,32}$/), { nil: undefined }),
});
const outputArb: fc.Arbitrary<Output> = fc
  .record({
    reasoning: fc.option(textArb, { nil: undefined }),
    style: fc.constantFrom<ReasoningStyle>("reasoning_content", "reasoning", "think-tags", "think-preopened"),
    answer: textArb,
    calls: fc.array(callArb, { maxLength: 3 }),
    textual: fc.boolean(),
    finish: fc.boolean(),
  })
  // A pre-opened template always has a reasoning part (possibly empty) before `</think>`.
  .map((o) => (o.style === "think-preopened" && o.reasoning === undefined ? { ...o, reasoning: "" } : o))
  // Textual calls carry no ids, and structured ids must be unique to be told apart.
  .map((o) => ({
    ...o,
    calls: o.calls.map((c, i) => ({ ...c, id: o.textual || c.id === undefined ? undefined : `${c.id}${i}` })),
  }));

/** One concrete stream for `o`, cut as `seeds` say. */
function toPlan(o: Output, seeds: number[]): StreamPlan {
  const steps: StreamStep[] = [];
  let content = "";
  if (o.reasoning !== undefined) {
    if (o.style === "reasoning_content" || o.style === "reasoning") {
      const key = o.style;
      for (const p of cutAt(o.reasoning, seeds)) steps.push({ delta: { [key]: p } });
    } else if (o.style === "think-tags") content += `<think>${o.reasoning}</think>\n\n`;
    else content += `${o.reasoning}</think>\n\n`;
  }
  content += o.answer;
  if (o.textual) {
    for (const c of o.calls)
      content += `\n<tool_call>\n${modelJson({ name: c.name, arguments: c.args })}\n</tool_call>`;
  }
  for (const p of cutAt(
    content,
    seeds.map((n) => n * 7 + 3),
  ))
    steps.push({ delta: { content: p } });
  if (!o.textual && o.calls.length > 0) {
    const perCall = o.calls.map((c, index) => {
      const [first = "", ...rest] = cutAt(
        modelJson(c.args),
        seeds.map((n) => n * 13 + index),
      );
      const head: FakeToolCallFragment = {
        index,
        ...(c.id ? { id: c.id } : {}),
        type: "function",
        function: { name: c.name, arguments: first },
      };
      return [head, ...rest.map((a): FakeToolCallFragment => ({ index, function: { arguments: a } }))];
    });
    // Interleave calls in an order the seeds choose, keeping each call's own order.
    const queues = perCall.map((q) => [...q]);
    for (let k = 0; queues.some((q) => q.length > 0); k++) {
      const open = queues.filter((q) => q.length > 0);
      const q = open[(seeds[k % Math.max(1, seeds.length)] ?? k) % open.length] as FakeToolCallFragment[];
      steps.push({ delta: { tool_calls: [q.shift() as FakeToolCallFragment] } });
    }
  }
  if (o.finish) steps.push({ finish: o.calls.length > 0 && !o.textual ? "tool_calls" : "stop" });
  return { kind: "stream", steps };
}

/** What any cut of `o` must produce. */
function meaning(o: Output) {
  return {
    text: o.answer.trim(),
    reasoning: o.reasoning ?? "",
    calls: o.calls.map((c) => ({ name: c.name, args: c.args })),
    ids: o.calls.map((c) => c.id),
  };
}

/** The outcome, reduced to what the property compares. */
function observed(outcome: RoundOutcome, shownText: string, shownReasoning: string) {
  return {
    text: outcome.text,
    reasoning: outcome.reasoning,
    calls: outcome.toolCalls.map((c) => ({ name: c.function.name, args: JSON.parse(c.function.arguments) as unknown })),
    shownText: shownText.trim(),
    shownReasoning,
    ids: outcome.toolCalls.map((c) => c.id),
  };
}

function checkAgainst(o: Output, got: ReturnType<typeof observed>): void {
  const want = meaning(o);
  expect(got.text).toBe(want.text);
  expect(got.shownText).toBe(want.text);
  expect(got.reasoning).toBe(want.reasoning);
  expect(got.shownReasoning).toBe(want.reasoning);
  expect(got.calls).toEqual(want.calls);
  want.ids.forEach((id, i) => {
    if (id !== undefined) expect(got.ids[i]).toBe(id);
    else expect(got.ids[i]).toMatch(/^call_[A-Za-z0-9]{24}$/);
  });
  expect(new Set(got.ids).size).toBe(got.ids.length);
}

const seedsArb = fc.array(fc.nat({ max: 10_000 }), { maxLength: 12 });

describe("re-chunking a valid stream never changes its meaning", () => {
  it("at the SSE-event level (any delta boundaries), through the accumulator", () => {
    fc.assert(
      fc.property(outputArb, seedsArb, (o, seeds) => {
        const chunks = parseSse(renderSseText(toPlan(o, seeds), { includeUsage: seeds.length % 2 === 0 }));
        const acc = createStreamAccumulator({ startInReasoning: o.style === "think-preopened" });
        let text = "";
        let reasoning = "";
        const take = (d: { type: string; text: string }) =>
          d.type === "text" ? (text += d.text) : (reasoning += d.text);
        for (const c of chunks) acc.push(c).forEach(take);
        const { deltas, outcome } = acc.end();
        deltas.forEach(take);
        checkAgainst(o, observed(outcome, text, reasoning));
      }),
      { numRuns: 400 },
    );
  });

  describe("at the byte level, over HTTP through the openai SDK", () => {
    let fake: FakeOpenAI;
    beforeAll(async () => {
      fake = await startFakeOpenAI();
    });
    afterAll(async () => {
      await fake.close();
    });

    it("random byte pieces (splitting SSE lines and UTF-8 characters) give the same result", async () => {
      const client = createModelClient({ baseURL: fake.url, apiKey: "sk-test", timeoutMs: 5_000 });
      await fc.assert(
        fc.asyncProperty(
          outputArb,
          seedsArb,
          fc.integer({ min: 3, max: 64 }),
          fc.nat(),
          async (o, seeds, maxBytes, byteSeed) => {
            fake.script([{ ...toPlan(o, seeds), fragment: { seed: byteSeed, maxBytes } }]);
            const round = streamRound(
              client,
              {
                model: "m",
                messages: [{ role: "user", content: "x" }],
                stream: true,
                stream_options: { include_usage: true },
              },
              { idleTimeoutMs: 5_000, startInReasoning: o.style === "think-preopened" },
            );
            let text = "";
            let reasoning = "";
            let next = await round.next();
            while (!next.done) {
              if (next.value.type === "text") text += next.value.text;
              else reasoning += next.value.text;
              next = await round.next();
            }
            expect(next.value.aborted).toBe(false);
            checkAgainst(o, observed(next.value, text, reasoning));
          },
        ),
        { numRuns: 12 },
      );
    });
  });
});
