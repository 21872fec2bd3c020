/**
 * A fake OpenAI-compatible model server on 127.0.0.1, speaking
 * `POST /v1/chat/completions` the way llama.cpp's `llama-server` does (framing,
 * key order, headers and error shapes from the captures in
 * test/agent/fixtures/llama-server), plus `GET /v1/models`, `/health`, and
 * llama.cpp's `POST /tokenize`, `GET /props` and context check (llama-extras.ts).
 *
 * Scriptable per request: a handler gets the recorded request and returns a
 * ResponsePlan (see openai-plans.ts for builders), or `script([...plans])`
 * queues one plan per request. Every chat request is recorded in `requests`
 * so tests can assert what the model was sent. Dependency-free (node:http).
 *
 *   const fake = await startFakeOpenAI();
 *   fake.script([toolCallAnswer([{ name: "get_weather", arguments: { city: "Paris" } }]), textAnswer("18°C")]);
 *   const client = createModelClient({ baseURL: fake.url, apiKey: "sk-test", timeoutMs: 5000 });
 *   …
 *   expect(fake.requests[1]?.body.messages?.at(-1)).toMatchObject({ role: "tool" });
 *   await fake.close();
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import {
  contextExceeded,
  llamaId,
  seededRandom,
  type ErrorPlan,
  type FakeDelta,
  type FakeToolCallFragment,
  type RawPlan,
  type ResponsePlan,
  type StreamPlan,
} from "./openai-plans.js";
import { encodePrompt, encodeText, propsBody, tokenizeBody, type LlamaExtrasOptions } from "./llama-extras.js";
import { createLlamaSlots, type SlotAdmission } from "./llama-slots.js";

export * from "./openai-plans.js";

/** The JSON body of a chat request, as the fake parsed it. */
export interface FakeChatRequestBody {
  model?: string;
  /** Messages as sent (any shape: tests read them loosely). */
  messages?: Array<Record<string, any>>;
  tools?: Array<{
    type: string;
    function: { name: string; description?: string; parameters?: Record<string, unknown> };
  }>;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  /** Dialect fields (chat_template_kwargs, enable_thinking, reasoning_effort…). */
  [key: string]: any;
}

/** How a response ended, from the fake's side. */
export type ResponseOutcome = "completed" | "client-closed" | "dropped";

/** One chat request as received. */
export interface RecordedRequest {
  /** 0-based position among chat requests. */
  index: number;
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  rawBody: string;
  body: FakeChatRequestBody;
  receivedAt: number;
  /** Settles when the response is over; `client-closed` means the client went away first (an abort). */
  outcome: Promise<ResponseOutcome>;
  /** The prompt's tokens as llama.cpp counts them (set when `llama.enforceContext` or `llama.promptCache` is on). */
  promptTokens?: number;
  /** With `llama.promptCache`: prompt tokens taken from a slot's cache (`timings.cache_n`). */
  cachedTokens?: number;
  /** With `llama.promptCache`: prompt tokens the server read (`timings.prompt_n`). */
  processedTokens?: number;
  /** With `llama.promptCache`: the slot that served it. */
  slot?: number;
}

/** Decides the response to one chat request. */
export type FakeHandler = (request: RecordedRequest) => ResponsePlan | Promise<ResponsePlan>;

/** Options of the fake. */
export interface FakeOpenAIOptions {
  handler?: FakeHandler;
  /** The model id the server reports (llama.cpp reports its file name, whatever the request said). */
  modelId?: string;
  /** `GET /props` like llama-server: `vision` says whether an mmproj is loaded (default false); `fields` adds or replaces fields. */
  props?: { vision?: boolean; fields?: Record<string, unknown> };
  /**
   * How the server treats `tools` (default "structured", llama.cpp with --jinja):
   * "as-text" streams the calls as `<tool_call>` text in `content` and ends with `stop` (no tool-call parser);
   * "requires-jinja" refuses any request with tools as llama.cpp without --jinja does (HTTP 500);
   * "dropped" hides `tools` from the handler, as a server that ignores them.
   */
  toolCalls?: "structured" | "as-text" | "requires-jinja" | "dropped";
  /** The context size reported by GET /props and /v1/models (`n_ctx`); default 16384, the compose file's `-c` (also `llama.contextTokens`). */
  contextTokens?: number;
  /** Models `GET /v1/models` lists, like llama.cpp's router mode, Ollama or vLLM serving several (default: `modelId` alone). */
  models?: string[];
  /** llama.cpp's `/tokenize`, `/props` and context check (llama-extras.ts). */
  llama?: LlamaExtrasOptions;
}

/** A running fake. */
export interface FakeOpenAI {
  /** Base URL including `/v1`, for OPENAI_BASE_URL. */
  url: string;
  origin: string;
  port: number;
  /** Every chat request, in arrival order. */
  requests: RecordedRequest[];
  setHandler(handler: FakeHandler): void;
  /** Queues one plan (or handler) per coming request; a request beyond the queue gets a loud HTTP 500. */
  script(plans: Array<ResponsePlan | FakeHandler>): void;
  /** Plans still queued by `script`. */
  readonly remaining: number;
  close(): Promise<void>;
}

const FINGERPRINT = "b10470-34af94cd9";
const BASE_HEADERS: [string, string][] = [
  ["Server", "llama.cpp"],
  ["Access-Control-Allow-Origin", ""],
];

/** Starts the fake on 127.0.0.1 with a free port. */
export async function startFakeOpenAI(handlerOrOptions: FakeHandler | FakeOpenAIOptions = {}): Promise<FakeOpenAI> {
  const options: FakeOpenAIOptions =
    typeof handlerOrOptions === "function" ? { handler: handlerOrOptions } : handlerOrOptions;
  const modelId = options.modelId ?? "qwen3-1.7b-q8_0.gguf";
  const llama = options.llama ?? {};
  const contextTokens = llama.contextTokens ?? options.contextTokens ?? 16384;
  let handler: FakeHandler | undefined = options.handler;
  let queue: Array<ResponsePlan | FakeHandler> = [];
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const shutdown = new AbortController();
  const slots = llama.promptCache
    ? createLlamaSlots(typeof llama.promptCache === "object" ? llama.promptCache : {})
    : undefined;

  const server = createServer((req, res) => {
    res.sendDate = false; // llama.cpp sends no Date header
    void route(req, res).catch((error: unknown) => {
      if (!res.headersSent)
        sendJson(res, 500, {
          error: { code: 500, message: `fake-openai crashed: ${String(error)}`, type: "server_error" },
        });
      else res.destroy();
    });
  });
  server.on("connection", (socket) => {
    socket.setNoDelay(true); // so fragments leave as separate segments
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const rawBody = await readBody(req);
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    if (req.method === "GET" && (path === "/health" || path === "/v1/health"))
      return sendJson(res, 200, { status: "ok" });
    if (req.method === "GET" && (path === "/v1/models" || path === "/models"))
      return sendJson(res, 200, modelsBody(options.models ?? [modelId], contextTokens));
    // llama.cpp's side endpoints (llama-extras.ts); other fields of /props come in through `props.fields` and `llama.propsFields`.
    if (req.method === "POST" && path === "/tokenize" && llama.tokenize !== false) {
      const answer = await tokenizeBody(rawBody, llama.tokenizeLie);
      return sendJson(res, answer.status, answer.body);
    }
    if (req.method === "GET" && path === "/props" && llama.props !== false)
      return sendJson(res, 200, propsFor(contextTokens, options, llama));
    if (req.method !== "POST" || (path !== "/v1/chat/completions" && path !== "/chat/completions")) {
      return sendJson(res, 404, { error: { code: 404, message: "File Not Found", type: "not_found_error" } }, true);
    }

    let settle: (o: ResponseOutcome) => void = () => undefined;
    const outcome = new Promise<ResponseOutcome>((resolve) => (settle = resolve));
    let dropped = false;
    res.on("close", () => settle(dropped ? "dropped" : res.writableFinished ? "completed" : "client-closed"));

    let body: FakeChatRequestBody = {};
    let parseError: string | undefined;
    try {
      const parsed: unknown = JSON.parse(rawBody);
      if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) body = parsed as FakeChatRequestBody;
      else parseError = "[json.exception.type_error.302] type must be object";
      // llama.cpp's JSON parser (nlohmann) refuses a lone UTF-16 half (`"\\ud83d"`) that JSON.parse lets through.
      if (parseError === undefined && holdsLoneSurrogate(parsed)) {
        parseError =
          "[json.exception.parse_error.101] parse error: syntax error while parsing value - invalid string: surrogate U+D800..U+DBFF must be followed by U+DC00..U+DFFF";
      }
    } catch (error) {
      parseError = `[json.exception.parse_error.101] parse error: ${(error as Error).message}`;
    }
    const record: RecordedRequest = {
      index: requests.length,
      method: req.method,
      path,
      headers: req.headers,
      rawBody,
      body,
      receivedAt: Date.now(),
      outcome,
    };
    requests.push(record);

    if (parseError !== undefined)
      return sendJson(res, 500, { error: { code: 500, message: parseError, type: "server_error" } }, true);
    if (!Array.isArray(body.messages)) {
      return sendJson(
        res,
        400,
        { error: { code: 400, message: "'messages' is required", type: "invalid_request_error" } },
        true,
      );
    }

    const hasTools = Array.isArray(body.tools) && body.tools.length > 0;
    if (hasTools && options.toolCalls === "requires-jinja") {
      return sendJson(
        res,
        500,
        { error: { code: 500, message: "tools param requires --jinja flag", type: "server_error" } },
        true,
      );
    }
    if (hasTools && options.toolCalls === "dropped")
      record.body = { ...body, tools: undefined, tool_choice: undefined };

    let prompt: number[] | undefined;
    if (llama.enforceContext || slots) {
      prompt = await encodePrompt(body);
      record.promptTokens = prompt.length;
      // llama.cpp refuses before generating anything: no scripted plan is used up.
      if (llama.enforceContext && record.promptTokens > contextTokens)
        return sendError(res, contextExceeded(record.promptTokens, contextTokens));
    }
    let plan: ResponsePlan;
    try {
      plan = await nextPlan(record);
      if (options.toolCalls === "as-text" && plan.kind === "stream") plan = toolCallsAsText(plan);
    } catch (error) {
      return sendJson(
        res,
        500,
        { error: { code: 500, message: `fake-openai handler threw: ${String(error)}`, type: "server_error" } },
        true,
      );
    }
    let admission: SlotAdmission | undefined;
    if (slots && prompt && (plan.kind === "stream" || plan.kind === "raw")) {
      // What the model writes stays in the slot after the prompt (the template renders it differently next time).
      const generated = plan.kind === "stream" ? await encodeText(generatedText(plan)) : [];
      admission = slots.admit(prompt);
      record.cachedTokens = admission.cachedTokens;
      record.processedTokens = admission.processedTokens;
      record.slot = admission.slot;
      // Freed as the last bytes are handed over (before the client can send its next request), or when the client goes.
      const release = once(() => admission?.release(generated));
      const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
      res.end = ((...args: unknown[]) => {
        release();
        return end(...args);
      }) as typeof res.end;
      res.once("close", release);
    }
    const ctx: WriteContext = {
      res,
      modelId,
      body,
      cachedTokens: admission?.cachedTokens ?? 0,
      promptTokens: record.promptTokens ?? Math.max(1, Math.ceil(rawBody.length / 4)),
      signal: AbortSignal.any([shutdown.signal, closedSignal(res)]),
      drop: () => {
        dropped = true;
        res.socket?.destroy();
      },
    };
    switch (plan.kind) {
      case "error":
        return sendError(res, plan);
      case "destroy":
        dropped = true;
        req.socket.destroy();
        return;
      case "raw":
        return writeRaw(ctx, plan);
      case "stream":
        return body.stream === true ? writeStream(ctx, plan) : writeCompletion(ctx, plan);
    }
  }

  async function nextPlan(record: RecordedRequest): Promise<ResponsePlan> {
    if (queue.length > 0) {
      const next = queue.shift() as ResponsePlan | FakeHandler;
      return typeof next === "function" ? next(record) : next;
    }
    if (handler) return handler(record);
    return {
      kind: "error",
      status: 500,
      error: {
        code: 500,
        message: `fake-openai: no response scripted for chat request #${record.index}`,
        type: "server_error",
      },
    };
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const origin = `http://127.0.0.1:${port}`;

  return {
    url: `${origin}/v1`,
    origin,
    port,
    requests,
    setHandler(h) {
      handler = h;
    },
    script(plans) {
      queue = [...plans];
    },
    get remaining() {
      return queue.length;
    },
    async close() {
      shutdown.abort();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** llama-server's `/props` (shape of build b6000+): slots, the model file, and which modalities its mmproj adds. */
/** A base URL on which nothing listens (for "connection refused"). */
export async function refusedBaseUrl(): Promise<string> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", () => resolve()));
  const port = (probe.address() as AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return `http://127.0.0.1:${port}/v1`;
}

// ---------------------------------------------------------------- writing

interface WriteContext {
  res: ServerResponse;
  modelId: string;
  body: FakeChatRequestBody;
  promptTokens: number;
  /** Of `promptTokens`, those a slot's cache held. */
  cachedTokens: number;
  signal: AbortSignal;
  drop: () => void;
}

async function writeStream(ctx: WriteContext, plan: StreamPlan): Promise<void> {
  const { res } = ctx;
  if (plan.headerDelayMs) await sleep(plan.headerDelayMs, ctx.signal);
  if (ctx.signal.aborted) return;
  res.writeHead(200, [...BASE_HEADERS, ["X-Accel-Buffering", "no"], ["Content-Type", "text/event-stream"]].flat());
  res.flushHeaders();
  const segments = renderStream(plan, {
    includeUsage: ctx.body.stream_options?.include_usage === true,
    modelId: ctx.modelId,
    promptTokens: ctx.promptTokens,
    cachedTokens: ctx.cachedTokens,
  });
  await writeSegments(ctx, segments, plan.fragment);
}

/** A piece of a rendered stream: bytes to write, a pause, or the socket destroyed. */
export type SseSegment = { bytes: string } | { delayMs: number } | { drop: true };

/** What the rendering needs to know about the request. */
export interface RenderOptions {
  /** The request asked for `stream_options.include_usage`. */
  includeUsage: boolean;
  modelId?: string;
  promptTokens?: number;
  /** Of the prompt, the tokens a slot's cache held (`cache_n`; default 0). */
  cachedTokens?: number;
  /** Unix seconds for `created`. */
  created?: number;
}

/**
 * Renders a plan as llama.cpp frames it: a role chunk with `content: null`, one
 * chunk per delta, the finish chunk (with `timings`, or followed by a usage chunk
 * with empty `choices` when usage was asked for), then `data: [DONE]`.
 */
export function renderStream(plan: StreamPlan, opts: RenderOptions): SseSegment[] {
  const modelId = opts.modelId ?? "qwen3-1.7b-q8_0.gguf";
  const promptTokens = opts.promptTokens ?? 10;
  const cached = opts.cachedTokens ?? 0;
  const id = `chatcmpl-${llamaId()}`;
  const created = opts.created ?? Math.floor(Date.now() / 1000);
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}): string =>
    `data: ${JSON.stringify({ choices, created, id, model: modelId, system_fingerprint: FINGERPRINT, object: "chat.completion.chunk", ...extra })}\n\n`;
  const tokenGap = plan.tokensPerSecond ? 1000 / plan.tokensPerSecond : 0;

  const segments: SseSegment[] = [
    { bytes: chunk([{ finish_reason: null, index: 0, delta: { role: "assistant", content: null } }]) },
  ];
  let tokens = 0;
  let elapsedMs = 0.5;
  let sawFinish = false;
  let ended: "normal" | "abrupt" = "normal";
  const pause = (ms: number): void => {
    segments.push({ delayMs: ms });
    elapsedMs += ms;
  };
  const usageChunk = (): string =>
    chunk([], {
      usage: {
        completion_tokens: tokens,
        prompt_tokens: promptTokens,
        total_tokens: tokens + promptTokens,
        prompt_tokens_details: { cached_tokens: cached },
      },
      timings: timings(promptTokens, tokens, elapsedMs, cached),
    });

  for (const step of plan.steps) {
    if ("delta" in step) {
      if (tokenGap) pause(tokenGap);
      tokens++;
      segments.push({ bytes: chunk([{ finish_reason: null, index: 0, delta: orderDelta(step.delta) }]) });
    } else if ("finish" in step) {
      if (tokenGap) pause(tokenGap);
      sawFinish = true;
      // llama.cpp: `timings` rides on the finish chunk, or on the usage chunk when one follows.
      const finishExtra = opts.includeUsage ? {} : { timings: timings(promptTokens, tokens, elapsedMs, cached) };
      segments.push({ bytes: chunk([{ finish_reason: step.finish, index: 0, delta: {} }], finishExtra) });
      if (opts.includeUsage) segments.push({ bytes: usageChunk() });
    } else if ("stallMs" in step) {
      pause(step.stallMs);
    } else if ("raw" in step) {
      segments.push({ bytes: step.raw });
    } else if ("errorEvent" in step) {
      segments.push({ bytes: `data: ${JSON.stringify({ error: step.errorEvent })}\n\n` });
      ended = "abrupt";
      break;
    } else {
      segments.push({ drop: true });
      ended = "abrupt";
      break;
    }
  }
  if (ended === "normal") {
    if (!sawFinish && opts.includeUsage) segments.push({ bytes: usageChunk() });
    if (!plan.omitDone) segments.push({ bytes: "data: [DONE]\n\n" });
  }
  return segments;
}

/** The bytes of a rendered stream (pauses ignored, stopping where the socket would drop). */
export function renderSseText(plan: StreamPlan, opts: RenderOptions): string {
  let text = "";
  for (const segment of renderStream(plan, opts)) {
    if ("drop" in segment) break;
    if ("bytes" in segment) text += segment.bytes;
  }
  return text;
}

/** `stream:false`: the same plan as one llama.cpp completion object. */
async function writeCompletion(ctx: WriteContext, plan: StreamPlan): Promise<void> {
  let content = "";
  let reasoning = "";
  let tokens = 0;
  let finish: string | null = null;
  const calls = new Map<number, { type: "function"; function: { name: string; arguments: string }; id: string }>();
  for (const step of plan.steps) {
    if ("delta" in step) {
      tokens++;
      content += step.delta.content ?? "";
      reasoning += step.delta.reasoning_content ?? step.delta.reasoning ?? "";
      for (const f of step.delta.tool_calls ?? []) {
        const call = calls.get(f.index ?? 0) ?? {
          type: "function" as const,
          function: { name: "", arguments: "" },
          id: "",
        };
        call.id ||= f.id ?? "";
        call.function.name ||= f.function?.name ?? "";
        call.function.arguments += f.function?.arguments ?? "";
        calls.set(f.index ?? 0, call);
      }
    } else if ("finish" in step) finish = step.finish;
    else if ("stallMs" in step) await sleep(step.stallMs, ctx.signal);
    else if ("errorEvent" in step) return sendJson(ctx.res, step.errorEvent.code, { error: step.errorEvent }, true);
    else if ("drop" in step) return ctx.drop();
  }
  if (ctx.signal.aborted) return;
  const message: Record<string, unknown> = { role: "assistant", content: calls.size ? content.trim() : content };
  if (reasoning) message.reasoning_content = reasoning;
  if (calls.size) {
    message.tool_calls = [...calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, c]) => ({
        type: c.type,
        function: { name: c.function.name, arguments: c.function.arguments.trim() },
        id: c.id || llamaId(),
      }));
  }
  sendJson(ctx.res, 200, {
    choices: [{ finish_reason: finish ?? "stop", index: 0, message }],
    created: Math.floor(Date.now() / 1000),
    model: ctx.modelId,
    system_fingerprint: FINGERPRINT,
    object: "chat.completion",
    usage: {
      completion_tokens: tokens,
      prompt_tokens: ctx.promptTokens,
      total_tokens: tokens + ctx.promptTokens,
      prompt_tokens_details: { cached_tokens: ctx.cachedTokens },
    },
    id: `chatcmpl-${llamaId()}`,
    timings: timings(ctx.promptTokens, tokens, 1, ctx.cachedTokens),
  });
}

async function writeRaw(ctx: WriteContext, plan: RawPlan): Promise<void> {
  ctx.res.writeHead(plan.status, [...plan.headers].flat());
  await writeBuffers(ctx, [Buffer.from(plan.body)], plan.fragment);
  if (!ctx.signal.aborted) ctx.res.end();
}

/** Writes segments in order, honouring delays; with `fragment`, re-cuts the bytes between delays at random points. */
async function writeSegments(
  ctx: WriteContext,
  segments: SseSegment[],
  fragment: StreamPlan["fragment"],
): Promise<void> {
  const random = fragment ? seededRandom(fragment.seed) : undefined;
  let pending: Buffer[] = [];
  const flush = async (): Promise<void> => {
    if (pending.length === 0) return;
    const group = pending;
    pending = [];
    await writeBuffers(ctx, group, fragment, random);
  };
  for (const segment of segments) {
    if (ctx.signal.aborted) return;
    if ("bytes" in segment) {
      pending.push(Buffer.from(segment.bytes, "utf8"));
      if (!fragment) await flush(); // one write per event, as llama.cpp does
    } else if ("delayMs" in segment) {
      await flush();
      await sleep(segment.delayMs, ctx.signal);
    } else {
      await flush();
      ctx.drop();
      return;
    }
  }
  await flush();
  if (!ctx.signal.aborted) ctx.res.end();
}

async function writeBuffers(
  ctx: WriteContext,
  buffers: Buffer[],
  fragment: StreamPlan["fragment"],
  random = fragment ? seededRandom(fragment.seed) : undefined,
): Promise<void> {
  const whole = Buffer.concat(buffers);
  const pieces: Buffer[] = [];
  if (fragment && random) {
    const max = Math.max(1, fragment.maxBytes ?? 7);
    for (let i = 0; i < whole.length; ) {
      const size = 1 + Math.floor(random() * max);
      pieces.push(whole.subarray(i, i + size));
      i += size;
    }
  } else pieces.push(whole);
  for (const piece of pieces) {
    if (ctx.signal.aborted) return;
    await new Promise<void>((resolve) => ctx.res.write(piece, () => resolve()));
    // Let the piece leave on its own so the client really sees the cut.
    if (fragment) await new Promise((resolve) => setImmediate(resolve));
  }
}

function sendError(res: ServerResponse, plan: ErrorPlan): void {
  sendJson(res, plan.status, { error: plan.error }, true, plan.headers);
}

function sendJson(
  res: ServerResponse,
  status: number,
  value: unknown,
  close = false,
  extra: [string, string][] = [],
): void {
  const text = JSON.stringify(value);
  const headers: [string, string][] = [
    ...BASE_HEADERS,
    ...extra,
    ["Content-Type", "application/json; charset=utf-8"],
    ["Content-Length", String(Buffer.byteLength(text))],
  ];
  // llama.cpp closes the connection after an error response.
  if (close) headers.push(["Connection", "close"]);
  res.writeHead(status, headers.flat());
  res.end(text);
}

/** Delta keys in llama.cpp's order; tool-call fragments as `index, id, type, function{name, arguments}`. */
function orderDelta(delta: FakeDelta): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (delta.content !== undefined) out.content = delta.content;
  if (delta.reasoning_content !== undefined) out.reasoning_content = delta.reasoning_content;
  if (delta.reasoning !== undefined) out.reasoning = delta.reasoning;
  if (delta.tool_calls) out.tool_calls = delta.tool_calls.map(orderFragment);
  return out;
}

function orderFragment(f: FakeToolCallFragment): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (f.index !== undefined) out.index = f.index;
  if (f.id !== undefined) out.id = f.id;
  if (f.type !== undefined) out.type = f.type;
  if (f.function) {
    const fn: Record<string, unknown> = {};
    if (f.function.name !== undefined) fn.name = f.function.name;
    if (f.function.arguments !== undefined) fn.arguments = f.function.arguments;
    out.function = fn;
  }
  return out;
}

/** llama.cpp's `timings`: `prompt_n` counts only the tokens read, `cache_n` those taken from the slot's cache. */
function timings(promptTokens: number, predictedN: number, elapsedMs: number, cacheN = 0): Record<string, number> {
  const promptN = Math.max(1, promptTokens - cacheN);
  const promptMs = Math.max(0.001, promptN * 0.3);
  const predictedMs = Math.max(0.001, elapsedMs);
  return {
    cache_n: cacheN,
    prompt_n: promptN,
    prompt_ms: promptMs,
    prompt_per_token_ms: promptMs / promptN,
    prompt_per_second: (promptN / promptMs) * 1000,
    predicted_n: predictedN,
    predicted_ms: predictedMs,
    predicted_per_token_ms: predictedN ? predictedMs / predictedN : 0,
    predicted_per_second: predictedN ? (predictedN / predictedMs) * 1000 : 0,
  };
}

/** A stream plan with its structured tool calls rewritten as the `<tool_call>` text Qwen3 writes, the way a server without a tool-call parser passes it on. */
function toolCallsAsText(plan: StreamPlan): StreamPlan {
  const calls = new Map<number, { name: string; arguments: string }>();
  const steps: StreamPlan["steps"] = [];
  for (const step of plan.steps) {
    if ("delta" in step && step.delta.tool_calls) {
      for (const f of step.delta.tool_calls) {
        const call = calls.get(f.index ?? 0) ?? { name: "", arguments: "" };
        call.name += f.function?.name ?? "";
        call.arguments += f.function?.arguments ?? "";
        calls.set(f.index ?? 0, call);
      }
      continue;
    }
    if ("finish" in step && step.finish === "tool_calls") {
      for (const call of calls.values()) {
        steps.push({
          delta: { content: `<tool_call>\n{"name": "${call.name}", "arguments": ${call.arguments}}\n</tool_call>` },
        });
      }
      steps.push({ finish: "stop" });
      continue;
    }
    steps.push(step);
  }
  return { ...plan, steps };
}

/** llama.cpp's GET /props, reduced to what clients read (n_ctx per request, the model, the modalities). */
/** `/props` as llama-server answers it (the captured body with this fake's `n_ctx`), with an mmproj when `props.vision` says so. */
function propsFor(
  contextTokens: number,
  options: FakeOpenAIOptions,
  llama: LlamaExtrasOptions,
): Record<string, unknown> {
  const vision =
    options.props?.vision !== undefined
      ? { modalities: { vision: options.props.vision, video: false, audio: false } }
      : {};
  return propsBody(contextTokens, { ...vision, ...options.props?.fields, ...llama.propsFields });
}

function modelsBody(modelIds: string[], contextTokens: number): unknown {
  return {
    models: modelIds.map((modelId) => ({
      name: modelId,
      model: modelId,
      modified_at: "",
      size: "",
      digest: "",
      type: "model",
      description: "",
      tags: [""],
      capabilities: ["completion"],
      parameters: "",
      details: {
        parent_model: "",
        format: "gguf",
        family: "",
        families: [""],
        parameter_size: "",
        quantization_level: "",
      },
    })),
    object: "list",
    data: modelIds.map((modelId) => ({
      id: modelId,
      aliases: [modelId],
      tags: [],
      object: "model",
      created: Math.floor(Date.now() / 1000),
      owned_by: "llamacpp",
      meta: {
        vocab_type: 2,
        n_vocab: 151936,
        n_ctx: contextTokens,
        n_ctx_train: 40960,
        n_embd: 2048,
        n_params: 1720574976,
        size: 1834426368,
        ftype: "Q8_0",
      },
    })),
  };
}

async function readBody(req: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  return Buffer.concat(parts).toString("utf8");
}

/** Aborts when the response closes (the client went away, or we finished). */
function closedSignal(res: ServerResponse): AbortSignal {
  const controller = new AbortController();
  res.once("close", () => controller.abort());
  return controller.signal;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

/** True when any string in a parsed JSON value holds half of a UTF-16 surrogate pair alone. */
function holdsLoneSurrogate(value: unknown): boolean {
  if (typeof value === "string")
    return /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(value);
  if (Array.isArray(value)) return value.some(holdsLoneSurrogate);
  if (typeof value === "object" && value !== null)
    return Object.entries(value).some(([k, v]) => holdsLoneSurrogate(k) || holdsLoneSurrogate(v));
  return false;
}

/** What the model wrote in a plan, as its slot keeps it: thinking, text, then the calls in Qwen3's `<tool_call>` form. */
function generatedText(plan: StreamPlan): string {
  let reasoning = "";
  let content = "";
  const calls = new Map<number, { name: string; arguments: string }>();
  for (const step of plan.steps) {
    if (!("delta" in step)) continue;
    reasoning += step.delta.reasoning_content ?? step.delta.reasoning ?? "";
    content += step.delta.content ?? "";
    for (const f of step.delta.tool_calls ?? []) {
      const call = calls.get(f.index ?? 0) ?? { name: "", arguments: "" };
      call.name += f.function?.name ?? "";
      call.arguments += f.function?.arguments ?? "";
      calls.set(f.index ?? 0, call);
    }
  }
  let text = reasoning ? `<think>\n${reasoning}\n</think>\n\n${content}` : content;
  [...calls.values()].forEach((call, i) => {
    if (i > 0 || text) text += "\n";
    text += `<tool_call>\n{"name": "${call.name}", "arguments": ${call.arguments}}\n</tool_call>`;
  });
  return text;
}

/** A function that runs at most once. */
function once(fn: () => void): () => void {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    fn();
  };
}
