/**
 * Response plans for the fake OpenAI-compatible server, and builders for the
 * quirks real servers show. A plan says what the model "writes" (deltas) and
 * how the bytes go out (finish chunk or none, drop, error event, stall, pace,
 * fragmentation); the server adds llama.cpp's framing around it.
 */

/** A delta as llama.cpp (or vLLM/Ollama for `reasoning`) puts it in one chunk. */
export interface FakeDelta {
  content?: string;
  reasoning_content?: string;
  /** vLLM ≥ 0.10 / Ollama / LM Studio spelling of reasoning. */
  reasoning?: string;
  tool_calls?: FakeToolCallFragment[];
}

/** One `delta.tool_calls[]` entry, keys in llama.cpp's order. */
export interface FakeToolCallFragment {
  index?: number;
  id?: string;
  type?: "function";
  function?: { name?: string; arguments?: string };
}

/** An llama.cpp error object: `{"code":…,"message":…,"type":…}` plus extras. */
export interface LlamaError {
  code: number;
  message: string;
  type: string;
  [extra: string]: unknown;
}

/** One step of a streamed response. */
export type StreamStep =
  | { delta: FakeDelta }
  /** The finish chunk (`null` never appears here: leave the step out for "no finish_reason"). */
  | { finish: string }
  /** No bytes for this long. */
  | { stallMs: number }
  /** `data: {"error":…}` then the response ends, as llama.cpp does on a parse failure mid-stream. */
  | { errorEvent: LlamaError }
  /** The socket is destroyed: no terminating chunk, no `[DONE]`. */
  | { drop: true }
  /** Bytes written as they are (a comment line, a malformed event…). */
  | { raw: string };

/** A 200 `text/event-stream` response (or a JSON completion if the request said `stream:false`). */
export interface StreamPlan {
  kind: "stream";
  steps: StreamStep[];
  /** Wait before sending the headers (a slow prompt evaluation). */
  headerDelayMs?: number;
  /** Delay between chunks, as a generation speed. */
  tokensPerSecond?: number;
  /** Cut the bytes at random points (seeded), splitting SSE lines and UTF-8 characters. */
  fragment?: { seed: number; maxBytes?: number };
  /** Leave out the closing `data: [DONE]` (a server that just closes the stream). */
  omitDone?: boolean;
}

/** An HTTP error with llama.cpp's JSON body `{"error":{…}}`. */
export interface ErrorPlan {
  kind: "error";
  status: number;
  error: LlamaError;
  /** Extra response headers (e.g. Retry-After). */
  headers?: [string, string][];
}

/** Anything else, byte for byte (used to replay captured fixtures). */
export interface RawPlan {
  kind: "raw";
  status: number;
  headers: [string, string][];
  body: string | Uint8Array;
  fragment?: { seed: number; maxBytes?: number };
}

/** Accept the request, then destroy the socket without answering. */
export interface DestroyPlan {
  kind: "destroy";
}

/** What the fake does with one request. */
export type ResponsePlan = StreamPlan | ErrorPlan | RawPlan | DestroyPlan;

/** How reasoning reaches the client. */
export type ReasoningStyle = "reasoning_content" | "reasoning" | "think-tags" | "think-preopened";

/** A tool call the fake model makes. `arguments` objects are written the way Qwen writes JSON (`{"city": "Paris"}`). */
export interface FakeCall {
  name: string;
  arguments: unknown;
  id?: string;
}

// ---------------------------------------------------------------- tokens

/** Splits text into model-token-like pieces: words with their leading space, one Han character, one punctuation mark. */
export function tokenize(text: string): string[] {
  return text.match(/\s*(?:\p{Script=Han}|(?:(?!\p{Script=Han})[\p{L}\p{N}_])+|[^\s\p{L}\p{N}_])|\s+/gu) ?? [];
}

/** JSON as a Qwen model writes it: `{"city": "Paris", "n": 1}`. */
export function modelJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(modelJson).join(", ")}]`;
  if (value !== null && typeof value === "object") {
    return `{${Object.entries(value)
      .map(([k, v]) => `${JSON.stringify(k)}: ${modelJson(v)}`)
      .join(", ")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/** Splits argument JSON the way llama.cpp streams it: `{` first, then pieces that cut tokens (` "P` + `aris`). */
export function splitArguments(json: string): string[] {
  if (json === "") return [];
  const pieces: string[] = [];
  let i = 0;
  if (json.startsWith("{")) {
    pieces.push("{");
    i = 1;
  }
  const sizes = [1, 4, 1, 1, 3, 4, 2, 5];
  for (let k = 0; i < json.length; k++) {
    const size = sizes[k % sizes.length] ?? 1;
    pieces.push(json.slice(i, i + size));
    i += size;
  }
  return pieces;
}

const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** A llama.cpp-style id: 32 alphanumerics, no `call_` prefix. */
export function llamaId(random: () => number = Math.random): string {
  let s = "";
  for (let i = 0; i < 32; i++) s += ALNUM[Math.floor(random() * ALNUM.length)];
  return s;
}

/** A small seeded PRNG (mulberry32) so fragmentation is reproducible. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// ---------------------------------------------------------------- builders

/** Options shared by the answer builders. */
export interface AnswerOptions {
  /** Reasoning written before the answer. */
  reasoning?: string;
  reasoningStyle?: ReasoningStyle;
  /** With think-tags: split `<think>`/`</think>` across chunks (`<th` + `ink>`). */
  splitTags?: boolean;
  /** Override the finish reason; `null` sends no finish chunk at all. */
  finish?: string | null;
}

function reasoningSteps(reasoning: string | undefined, style: ReasoningStyle, splitTags: boolean): StreamStep[] {
  if (reasoning === undefined) return [];
  const tokens = tokenize(reasoning);
  switch (style) {
    case "reasoning_content":
      return tokens.map((t) => ({ delta: { reasoning_content: t } }));
    case "reasoning":
      return tokens.map((t) => ({ delta: { reasoning: t } }));
    case "think-tags": {
      const open = splitTags ? ["<th", "ink>"] : ["<think>"];
      const close = splitTags ? ["</", "think", ">"] : ["</think>"];
      return [...open, ...tokens, ...close, "\n\n"].map((t) => ({ delta: { content: t } }));
    }
    case "think-preopened": {
      const close = splitTags ? ["</th", "ink>"] : ["</think>"];
      return [...tokens, ...close, "\n\n"].map((t) => ({ delta: { content: t } }));
    }
  }
}

function finishSteps(finish: string | null | undefined, fallback: string): StreamStep[] {
  if (finish === null) return [];
  return [{ finish: finish ?? fallback }];
}

/** A plain answer, one token per chunk, optionally after reasoning in any of its forms. */
export function textAnswer(text: string, opts: AnswerOptions = {}): StreamPlan {
  return {
    kind: "stream",
    steps: [
      ...reasoningSteps(opts.reasoning, opts.reasoningStyle ?? "reasoning_content", opts.splitTags ?? false),
      ...tokenize(text).map((t) => ({ delta: { content: t } })),
      ...finishSteps(opts.finish, "stop"),
    ],
  };
}

/** Options of a structured tool-call answer. */
export interface ToolCallOptions extends AnswerOptions {
  /** Fragments of the calls alternate (call 0, call 1, call 0, …) instead of one call after another. */
  interleave?: boolean;
  /** Text the model writes before calling. */
  preamble?: string;
  /** Send no `id` at all (the client must make one up). */
  omitIds?: boolean;
}

/**
 * Structured `delta.tool_calls` as llama.cpp streams them: the first fragment of
 * a call carries index, id, type, name and the opening `{`; the rest carry only
 * index and argument pieces split mid-token. Finishes with `tool_calls`.
 */
export function toolCallAnswer(calls: FakeCall[], opts: ToolCallOptions = {}): StreamPlan {
  const perCall = calls.map((call, index) => {
    const args = typeof call.arguments === "string" ? call.arguments : modelJson(call.arguments);
    const [first = "", ...rest] = splitArguments(args);
    const head: FakeToolCallFragment = {
      index,
      ...(opts.omitIds ? {} : { id: call.id ?? llamaId() }),
      type: "function",
      function: { name: call.name, arguments: first },
    };
    return [head, ...rest.map((piece): FakeToolCallFragment => ({ index, function: { arguments: piece } }))];
  });
  const fragments: FakeToolCallFragment[] = [];
  if (opts.interleave) {
    const longest = Math.max(0, ...perCall.map((p) => p.length));
    for (let i = 0; i < longest; i++) for (const p of perCall) if (p[i]) fragments.push(p[i] as FakeToolCallFragment);
  } else {
    for (const p of perCall) fragments.push(...p);
  }
  return {
    kind: "stream",
    steps: [
      ...reasoningSteps(opts.reasoning, opts.reasoningStyle ?? "reasoning_content", opts.splitTags ?? false),
      ...tokenize(opts.preamble ?? "").map((t) => ({ delta: { content: t } })),
      ...fragments.map((f) => ({ delta: { tool_calls: [f] } })),
      ...finishSteps(opts.finish, "tool_calls"),
    ],
  };
}

/**
 * Calls written into content as `<tool_call>{"name":…,"arguments":…}</tool_call>`
 * (a small model behind a server that does not parse them). Tags are split
 * across chunks; ends with `stop`, as such servers do.
 */
export function textualToolCallAnswer(calls: FakeCall[], opts: AnswerOptions & { preamble?: string } = {}): StreamPlan {
  const pieces: string[] = [];
  if (opts.preamble) pieces.push(...tokenize(opts.preamble), "\n");
  calls.forEach((call, i) => {
    if (i > 0) pieces.push("\n");
    const json = modelJson({ name: call.name, arguments: call.arguments });
    pieces.push("<tool", "_call", ">\n", ...splitArguments(json), "\n</", "tool_call", ">");
  });
  return {
    kind: "stream",
    steps: [
      ...reasoningSteps(opts.reasoning, opts.reasoningStyle ?? "think-tags", opts.splitTags ?? false),
      ...pieces.map((t) => ({ delta: { content: t } })),
      ...finishSteps(opts.finish, "stop"),
    ],
  };
}

function deltaCount(plan: StreamPlan): number {
  return plan.steps.filter((s) => "delta" in s).length;
}

/** Keeps the first `n` deltas of `plan`, then applies `tail`. */
function afterDeltas(plan: StreamPlan, n: number, tail: StreamStep[]): StreamPlan {
  const steps: StreamStep[] = [];
  let seen = 0;
  for (const step of plan.steps) {
    if ("delta" in step) {
      if (seen >= n) break;
      seen++;
      steps.push(step);
    } else if (!("finish" in step)) steps.push(step);
  }
  return { ...plan, steps: [...steps, ...tail] };
}

/** The answer cut by `max_tokens` after `n` tokens: `finish_reason: "length"`. */
export function cutByLength(plan: StreamPlan, n: number): StreamPlan {
  return afterDeltas(plan, n, [{ finish: "length" }]);
}

/** Replaces the finish reason; `null` removes the finish chunk (a server that sends none). */
export function withFinish(plan: StreamPlan, finish: string | null): StreamPlan {
  return afterDeltas(plan, deltaCount(plan), finish === null ? [] : [{ finish }]);
}

/** The connection is destroyed after `n` deltas. */
export function dropAfter(plan: StreamPlan, n: number): StreamPlan {
  return afterDeltas(plan, n, [{ drop: true }]);
}

/** llama.cpp's real mid-stream failure (fixture random_01). */
export const PEG_PARSE_ERROR: LlamaError = {
  code: 500,
  message: "The model produced output that does not match the expected peg-native format",
  type: "server_error",
};

/** An error event replaces the rest of the stream after `n` deltas. */
export function errorEventAfter(plan: StreamPlan, n: number, error: LlamaError = PEG_PARSE_ERROR): StreamPlan {
  return afterDeltas(plan, n, [{ errorEvent: error }]);
}

/** No bytes for `ms` after `n` deltas, then the rest. */
export function stallAfter(plan: StreamPlan, n: number, ms: number): StreamPlan {
  const steps = [...plan.steps];
  let seen = 0;
  let at = steps.length;
  for (let i = 0; i < steps.length; i++) {
    const step = steps[i];
    if (step && "delta" in step && ++seen === n) {
      at = i + 1;
      break;
    }
  }
  steps.splice(n === 0 ? 0 : at, 0, { stallMs: ms });
  return { ...plan, steps };
}

/** Streams at a generation speed (for benchmarks and visible streaming). */
export function paced(plan: StreamPlan, tokensPerSecond: number): StreamPlan {
  return { ...plan, tokensPerSecond };
}

/** Writes the bytes in random pieces (seeded) that split SSE lines and UTF-8 characters. */
export function fragmented<P extends StreamPlan | RawPlan>(plan: P, seed: number, maxBytes = 7): P {
  return { ...plan, fragment: { seed, maxBytes } };
}

/** An HTTP error in llama.cpp's shape. */
export function httpError(
  status: number,
  message: string,
  type: string,
  extra: Record<string, unknown> = {},
): ErrorPlan {
  return { kind: "error", status, error: { code: status, message, type, ...extra } };
}

/** HTTP 500 as llama.cpp sends it. */
export function serverError(message = "Internal server error"): ErrorPlan {
  return httpError(500, message, "server_error");
}

/** HTTP 503 as llama.cpp sends it while the model is loading. */
export function unavailable(message = "Loading model"): ErrorPlan {
  return httpError(503, message, "unavailable_error");
}

/** HTTP 429 with a Retry-After header (hosted endpoints, vLLM behind a gateway). */
export function rateLimited(retryAfterSeconds = 2): ErrorPlan {
  return {
    ...httpError(429, "Too many requests", "rate_limit_error"),
    headers: [["Retry-After", String(retryAfterSeconds)]],
  };
}

/** HTTP 400 context exceeded, exactly as llama.cpp (fixture 26/27), even for `stream:true`. */
export function contextExceeded(promptTokens = 5009, contextTokens = 4096): ErrorPlan {
  return httpError(
    400,
    `request (${promptTokens} tokens) exceeds the available context size (${contextTokens} tokens), try increasing it`,
    "exceed_context_size_error",
    { n_prompt_tokens: promptTokens, n_ctx: contextTokens },
  );
}

/** The server accepts the connection and then resets it without a response. */
export function destroyConnection(): DestroyPlan {
  return { kind: "destroy" };
}

/** Replays captured bytes: `headersText` is a `.headers` capture (status line + headers), `body` the `.sse`/`.json`. */
export function replay(headersText: string, body: string | Uint8Array): RawPlan {
  const lines = headersText.split(/\r?\n/).filter((l) => l.trim() !== "");
  const status = Number(/^HTTP\/\S+\s+(\d{3})/.exec(lines[0] ?? "")?.[1] ?? 200);
  const headers = lines
    .slice(1)
    .map((l): [string, string] => {
      const i = l.indexOf(":");
      return [l.slice(0, i).trim(), l.slice(i + 1).trim()];
    })
    // Node frames a body without Content-Length as chunked itself, and adds its own Keep-Alive.
    .filter(([name]) => !/^(transfer-encoding|keep-alive)$/i.test(name));
  return { kind: "raw", status, headers, body };
}
