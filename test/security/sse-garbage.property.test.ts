/**
 * Fuzzing the model stream with garbage (nothing a server or proxy sends can
 * crash the worker). A valid answer is interleaved with what real servers and proxies
 * also put on the wire: SSE comments and keep-alives, empty events, `retry:`/`id:`/`event:`
 * lines, JSON that is not a chunk, chunks with vendor fields, and then cut into random
 * byte pieces. Properties:
 *  - ignorable garbage never changes the answer: same text, reasoning and tool calls;
 *  - a data line that is not JSON ends the round with a typed ModelError ("bad-response"),
 *    never anything else, and the text shown before it is a prefix of the answer.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { ChatCompletionChunk } from "openai/resources/chat/completions";
import { createModelClient } from "../../src/agent/model-client.js";
import { ModelError } from "../../src/agent/model-error.js";
import { createStreamAccumulator, type RoundOutcome } from "../../src/agent/stream-accumulator.js";
import { streamRound } from "../../src/agent/stream-round.js";
import {
  modelJson,
  renderSseText,
  startFakeOpenAI,
  type FakeOpenAI,
  type StreamPlan,
  type StreamStep,
} from "../fakes/openai-server.js";
import { cutAt } from "../support/cut-points.js";
import { parseSse } from "../agent/agent-harness.js";

interface Answer {
  reasoning: string;
  text: string;
  calls: { name: string; args: Record<string, string> }[];
}

const word = fc.constantFrom(
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
  "data:",
  ":",
  "[DONE]",
  "\r",
);
const textArb = fc.array(word, { maxLength: 20 }).map((w) => w.join(""));
const answerArb: fc.Arbitrary<Answer> = fc.record({
  reasoning: textArb,
  text: textArb,
  calls: fc.array(
    fc.record({
      name: fc.constantFrom("get_weather", "read_url"),
      args: fc.dictionary(fc.constantFrom("city", "url"), textArb, { maxKeys: 2 }),
    }),
    { maxLength: 2 },
  ),
});

/** Valid JSON that is not a chat chunk, or a chunk with nothing in it, or with fields no schema knows. */
const IGNORABLE_JSON = [
  "{}",
  "null",
  "42",
  '"keep-alive"',
  "[]",
  '{"choices":null}',
  '{"choices":[]}',
  '{"choices":[null]}',
  '{"choices":"none"}',
  '{"choices":[{"index":0,"delta":null,"finish_reason":null}]}',
  '{"choices":[{"index":0,"delta":"text?"}]}',
  '{"choices":[{"index":0,"delta":{"content":null,"tool_calls":null,"reasoning_content":null}}]}',
  '{"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}',
  '{"choices":[{"index":0,"delta":{"tool_calls":{}}}]}',
  '{"choices":[{"index":0,"delta":{"tool_calls":[null,5,"x"]}}]}',
  '{"choices":[{"index":0,"delta":{"content":7,"reasoning":false}}]}',
  '{"choices":[{"index":0,"delta":{},"finish_reason":42}]}',
  '{"usage":null}',
  '{"usage":"lots","choices":[]}',
  '{"object":"chat.completion.chunk","x_vendor":{"queue":[1,2]},"choices":[{"index":0,"delta":{"audio":{"id":"a"},"refusal":null},"logprobs":{"content":[]}}]}',
  '{"type":"ping"}',
];

/** Lines an SSE parser must skip: comments, empty events, fields without data. */
const IGNORABLE_LINES = [
  ": keep-alive\n\n",
  ":\n\n",
  "\n",
  "retry: 3000\n\n",
  "id: 17\n\n",
  "event: ping\ndata: {}\n\n",
  ": OPENROUTER PROCESSING\n\n",
];

/**
 * Data that is not JSON at all (a proxy's error page, a truncated chunk), and a named event without
 * data: the SSE spec says to drop it, but openai-node's decoder hands it on and JSON.parse("") throws.
 */
const NOT_JSON = [
  "event: ping\n\n",
  "data: hello\n\n",
  'data: {"choices":[{"delta":{"content":"x"\n\n',
  "data: <html><body>502 Bad Gateway</body></html>\n\n",
  "data: undefined\n\n",
];

type Garbage = { kind: "json"; raw: string } | { kind: "line"; raw: string } | { kind: "vendor-delta" };
const ignorableArb: fc.Arbitrary<Garbage> = fc.oneof(
  fc.constantFrom(...IGNORABLE_JSON).map((raw): Garbage => ({ kind: "json", raw })),
  fc.constantFrom(...IGNORABLE_LINES).map((raw): Garbage => ({ kind: "line", raw })),
  fc.constant<Garbage>({ kind: "vendor-delta" }),
);

/** The answer as llama.cpp would stream it, with `garbage` spliced in between the steps (vendor-delta turns the next content delta into a chunk with unknown fields). */
function planFor(a: Answer, seeds: readonly number[], garbage: readonly { at: number; g: Garbage }[]): StreamPlan {
  const steps: StreamStep[] = [];
  for (const p of cutAt(a.reasoning, seeds)) steps.push({ delta: { reasoning_content: p } });
  for (const p of cutAt(
    a.text,
    seeds.map((n) => n * 7 + 1),
  ))
    steps.push({ delta: { content: p } });
  a.calls.forEach((c, index) => {
    const [first = "", ...rest] = cutAt(
      modelJson(c.args),
      seeds.map((n) => n * 5 + index),
    );
    steps.push({
      delta: {
        tool_calls: [
          { index, id: `call_${index}abcdefgh`, type: "function", function: { name: c.name, arguments: first } },
        ],
      },
    });
    for (const r of rest) steps.push({ delta: { tool_calls: [{ index, function: { arguments: r } }] } });
  });
  steps.push({ finish: a.calls.length > 0 ? "tool_calls" : "stop" });
  const out: StreamStep[] = [];
  const byPosition = [...garbage].sort((x, y) => x.at - y.at);
  let g = 0;
  steps.forEach((step, i) => {
    let vendorize = false;
    while (g < byPosition.length && byPosition[g]!.at % (steps.length + 1) <= i) {
      const item = byPosition[g++]!.g;
      if (item.kind === "vendor-delta") vendorize = true;
      else out.push({ raw: item.kind === "json" ? `data: ${item.raw}\n\n` : item.raw });
    }
    if (vendorize && "delta" in step) {
      // The same delta, wrapped in fields no schema knows (OpenRouter, Groq and vLLM all add some).
      const chunk = {
        id: "x",
        object: "chat.completion.chunk",
        x_groq: { id: "req_1" },
        provider: "Fake",
        choices: [
          {
            index: 0,
            delta: { ...step.delta, refusal: null, annotations: [] },
            logprobs: null,
            native_finish_reason: null,
          },
        ],
      };
      out.push({ raw: `data: ${JSON.stringify(chunk)}\n\n` });
    } else out.push(step);
  });
  for (; g < byPosition.length; g++) {
    const item = byPosition[g]!.g;
    if (item.kind !== "vendor-delta") out.push({ raw: item.kind === "json" ? `data: ${item.raw}\n\n` : item.raw });
  }
  return { kind: "stream", steps: out };
}

function expectMeaning(a: Answer, outcome: RoundOutcome, shownText: string, shownReasoning: string): void {
  expect(outcome.text).toBe(a.text.trim());
  expect(shownText.trim()).toBe(a.text.trim());
  expect(outcome.reasoning).toBe(a.reasoning);
  expect(shownReasoning).toBe(a.reasoning);
  expect(
    outcome.toolCalls.map((c) => ({ name: c.function.name, args: JSON.parse(c.function.arguments) as unknown })),
  ).toEqual(a.calls.map((c) => ({ name: c.name, args: c.args })));
  expect(outcome.toolCalls.map((c) => c.id)).toEqual(a.calls.map((_, i) => `call_${i}abcdefgh`));
  expect(outcome.finishReason).toBe(a.calls.length > 0 ? "tool_calls" : "stop");
  expect(outcome.droppedToolCalls).toBe(0);
}

const seedsArb = fc.array(fc.nat({ max: 10_000 }), { maxLength: 10 });
const garbageArb = fc.array(fc.record({ at: fc.nat({ max: 1000 }), g: ignorableArb }), { minLength: 1, maxLength: 8 });

describe("the stream accumulator fed garbage chunks", () => {
  it("ignores JSON that is not a chunk and fields it does not know, losing nothing", () => {
    fc.assert(
      fc.property(answerArb, seedsArb, garbageArb, (a, seeds, garbage) => {
        // SSE-level lines never reach the accumulator (the SDK's parser drops them); JSON garbage does.
        const text = renderSseText(
          planFor(
            a,
            seeds,
            garbage.filter((x) => x.g.kind !== "line"),
          ),
          { includeUsage: true },
        );
        const chunks = text
          .split("\n\n")
          .map((e) => e.replace(/^data: /, ""))
          .filter((d) => d !== "" && d !== "[DONE]")
          .map((d) => JSON.parse(d) as ChatCompletionChunk);
        const acc = createStreamAccumulator();
        let shown = "";
        let thought = "";
        const take = (d: { type: string; text: string }) =>
          d.type === "text" ? (shown += d.text) : (thought += d.text);
        for (const c of chunks) acc.push(c).forEach(take);
        const { deltas, outcome } = acc.end();
        deltas.forEach(take);
        expectMeaning(a, outcome, shown, thought);
        // The real usage chunk still counts, whatever garbage came around it.
        expect(outcome.usage?.promptTokens).toBe(10);
      }),
      { numRuns: 400 },
    );
  });

  it("the baseline (no garbage) parses the same, so the property above compares like with like", () => {
    fc.assert(
      fc.property(answerArb, seedsArb, (a, seeds) => {
        const acc = createStreamAccumulator();
        let shown = "";
        let thought = "";
        for (const c of parseSse(renderSseText(planFor(a, seeds, []), { includeUsage: false }))) {
          for (const d of acc.push(c)) d.type === "text" ? (shown += d.text) : (thought += d.text);
        }
        const { deltas, outcome } = acc.end();
        for (const d of deltas) d.type === "text" ? (shown += d.text) : (thought += d.text);
        expectMeaning(a, outcome, shown, thought);
      }),
      { numRuns: 100 },
    );
  });
});

describe("garbage on the wire, through the openai SDK and streamRound", () => {
  let fake: FakeOpenAI;
  beforeAll(async () => {
    fake = await startFakeOpenAI();
    // The SDK prints every unparseable event to the console before throwing; the test checks the throw.
    vi.spyOn(console, "error").mockImplementation(() => undefined);
  });
  afterAll(async () => {
    vi.restoreAllMocks();
    await fake.close();
  });

  async function run(
    plan: StreamPlan,
  ): Promise<{ text: string; reasoning: string; result?: Awaited<ReturnType<typeof finishRound>>; error?: unknown }> {
    fake.script([plan]);
    const client = createModelClient({ baseURL: fake.url, apiKey: "sk-test", timeoutMs: 5_000 });
    const round = streamRound(
      client,
      { model: "m", messages: [{ role: "user", content: "x" }], stream: true, stream_options: { include_usage: true } },
      { idleTimeoutMs: 5_000 },
    );
    const seen = { text: "", reasoning: "" };
    try {
      return { ...seen, result: await finishRound(round, seen), ...seen };
    } catch (error) {
      return { text: seen.text, reasoning: seen.reasoning, error };
    }
  }

  async function finishRound(round: ReturnType<typeof streamRound>, seen: { text: string; reasoning: string }) {
    let next = await round.next();
    while (!next.done) {
      if (next.value.type === "text") seen.text += next.value.text;
      else seen.reasoning += next.value.text;
      next = await round.next();
    }
    return next.value;
  }

  it("ignorable garbage, cut into random byte pieces, changes nothing", async () => {
    await fc.assert(
      fc.asyncProperty(
        answerArb,
        seedsArb,
        garbageArb,
        fc.integer({ min: 2, max: 48 }),
        fc.nat(),
        async (a, seeds, garbage, maxBytes, byteSeed) => {
          const got = await run({ ...planFor(a, seeds, garbage), fragment: { seed: byteSeed, maxBytes } });
          expect(got.error).toBeUndefined();
          expect(got.result?.aborted).toBe(false);
          expectMeaning(a, got.result!, got.text, got.reasoning);
        },
      ),
      { numRuns: 25 },
    );
  });

  it("a data line that is not JSON ends the round with a typed ModelError, after a prefix of the answer", async () => {
    await fc.assert(
      fc.asyncProperty(
        answerArb,
        seedsArb,
        garbageArb,
        fc.constantFrom(...NOT_JSON),
        fc.nat({ max: 1000 }),
        fc.nat(),
        async (a, seeds, garbage, bad, at, byteSeed) => {
          const plan = planFor(a, seeds, garbage);
          const position = at % (plan.steps.length + 1);
          plan.steps.splice(position, 0, { raw: bad });
          const got = await run({ ...plan, fragment: { seed: byteSeed, maxBytes: 16 } });
          expect(got.error).toBeInstanceOf(ModelError);
          expect((got.error as ModelError).code).toBe("bad-response");
          expect((got.error as ModelError).retryable).toBe(true);
          expect(a.text.startsWith(got.text) || a.text.trimStart().startsWith(got.text.trimStart())).toBe(true);
          expect(a.reasoning.startsWith(got.reasoning)).toBe(true);
        },
      ),
      { numRuns: 20 },
    );
  });
});
