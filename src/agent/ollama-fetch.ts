/**
 * Ollama's native API behind the OpenAI client (MODEL_SERVER=ollama): a `fetch` for the SDK that sends each
 * `chat/completions` request to `POST /api/chat` and turns its NDJSON answer back into chat.completion chunks (SSE).
 * Not Ollama's `/v1`: it ignores `num_ctx` and silently cuts a long prompt at the model's default context, tool
 * definitions first. Ollama sends a tool call whole in one line, `done_reason` last, errors as `{"error": "…"}`.
 */
import { randomBytes } from "node:crypto";

/** Settings of the translation. */
export interface OllamaFetchOptions {
  /** The server root (OPENAI_BASE_URL without `/v1`). */
  serverRoot: string;
  /** `options.num_ctx`: the context the bot budgets for (a function is asked per request). */
  contextTokens: number | (() => Promise<number>);
  /**
   * MODEL_KEEP_ALIVE (default "30m": a Go duration, or whole seconds): Ollama's own 5 minutes unload the model and
   * its prompt cache between a chat's sparser messages.
   */
  keepAlive?: string;
  /** The transport for the real requests (the SDK's own fetch by default). */
  fetch?: typeof fetch;
}

type Json = Record<string, any>;

/** The fetch the SDK gets for an Ollama server. */
export function createOllamaFetch(opts: OllamaFetchOptions): typeof fetch {
  const doFetch = opts.fetch ?? fetch;
  const keepAliveSetting = opts.keepAlive ?? "30m";
  // Ollama reads whole seconds as a number ("-1": forever), anything else as a Go duration string.
  const keepAlive = /^-?\d+$/.test(keepAliveSetting) ? Number(keepAliveSetting) : keepAliveSetting;
  // Models that refused `think: true` ("… does not support thinking", HTTP 400): asked without it from then on.
  const cannotThink = new Set<string>();
  return async (input, init) => {
    const url = String(input instanceof Request ? input.url : input);
    if (!url.endsWith("/chat/completions") || init?.method !== "POST") return doFetch(input, init);
    const body = JSON.parse(String(init.body)) as Json;
    const contextTokens = typeof opts.contextTokens === "number" ? opts.contextTokens : await opts.contextTokens();
    const request = toOllamaRequest(body, contextTokens, keepAlive);
    const send = (ollamaBody: Json): Promise<Response> =>
      doFetch(`${opts.serverRoot}/api/chat`, {
        method: "POST",
        // The key goes along: an Ollama behind a reverse proxy that checks OPENAI_API_KEY wants it here too.
        headers: { "content-type": "application/json", ...authorizationOf(init.headers) },
        body: JSON.stringify(ollamaBody),
        ...(init.signal ? { signal: init.signal } : {}),
      });
    const model = String(body.model ?? "");
    const { think: _think, ...withoutThinking } = request;
    let upstream = await send(request.think === true && cannotThink.has(model) ? withoutThinking : request);
    if (upstream.status === 400 && request.think === true && !cannotThink.has(model)) {
      // ENABLE_THINKING is on (the default) and the model has no thinking (llama3.2, gemma3): Ollama refuses every
      // request with think:true. The answer comes without thinking instead of an error on every message.
      const refusal = await upstream.text();
      if (/does not support thinking/i.test(refusal)) {
        cannotThink.add(model);
        upstream = await send(withoutThinking);
      } else {
        upstream = new Response(refusal, { status: upstream.status, headers: upstream.headers });
      }
    }
    if (!upstream.ok) return errorResponse(upstream);
    if (body.stream !== true) return completionResponse(fromOllamaLine((await upstream.json()) as Json), body.model);
    return new Response(sseFromNdjson(upstream, String(body.model ?? "")), {
      status: 200,
      headers: { "content-type": "text/event-stream" },
    });
  };
}

/** The `authorization` header of a request, if it has one. */
function authorizationOf(headers: RequestInit["headers"]): Record<string, string> {
  const value = new Headers(headers ?? {}).get("authorization");
  return value ? { authorization: value } : {};
}

/** An OpenAI chat.completions body as an Ollama `/api/chat` body. */
export function toOllamaRequest(body: Json, contextTokens: number, keepAlive: string | number): Json {
  const names = new Map<string, string>();
  const messages = (body.messages as Json[]).map((m) => {
    if (m.role === "assistant" && Array.isArray(m.tool_calls)) {
      for (const c of m.tool_calls) names.set(c.id, c.function.name);
      return {
        role: "assistant",
        content: m.content ?? "",
        tool_calls: m.tool_calls.map((c: Json) => ({
          function: { name: c.function.name, arguments: parseArguments(c.function.arguments) },
        })),
      };
    }
    if (m.role === "tool") {
      const name = names.get(m.tool_call_id);
      return { role: "tool", content: m.content, ...(name ? { tool_name: name } : {}) };
    }
    if (Array.isArray(m.content)) {
      // Text and pictures: Ollama takes the pictures as bare base64 beside the text.
      const text = m.content.filter((p: Json) => p.type === "text").map((p: Json) => p.text);
      const images = m.content
        .filter((p: Json) => p.type === "image_url")
        .map((p: Json) => String(p.image_url.url).replace(/^data:[^,]*;base64,/, ""));
      return { role: m.role, content: text.join("\n"), ...(images.length ? { images } : {}) };
    }
    return { role: m.role, content: m.content ?? "" };
  });
  const options: Json = { num_ctx: contextTokens };
  if (body.max_tokens !== undefined) options.num_predict = body.max_tokens;
  if (body.temperature !== undefined) options.temperature = body.temperature;
  if (body.top_p !== undefined) options.top_p = body.top_p;
  return {
    model: body.model,
    messages,
    ...(Array.isArray(body.tools) && body.tools.length && body.tool_choice !== "none" ? { tools: body.tools } : {}),
    // The dialect turns thinking off with `reasoning_effort: "none"` (model-dialect.ts); anything else asks for it.
    think: body.reasoning_effort !== "none",
    stream: body.stream === true,
    keep_alive: keepAlive,
    options,
  };
}

function parseArguments(text: unknown): unknown {
  try {
    return JSON.parse(String(text));
  } catch {
    return {};
  }
}

type OllamaLine = ReturnType<typeof fromOllamaLine>;

/** What one Ollama line says, in OpenAI terms. */
function fromOllamaLine(line: Json) {
  const message = (line.message ?? {}) as Json;
  return {
    content: typeof message.content === "string" ? message.content : "",
    thinking: typeof message.thinking === "string" ? message.thinking : "",
    toolCalls: (Array.isArray(message.tool_calls) ? message.tool_calls : []).map((c: Json) => ({
      name: String(c.function?.name ?? ""),
      arguments: JSON.stringify(c.function?.arguments ?? {}),
    })),
    done: line.done === true,
    doneReason: typeof line.done_reason === "string" ? line.done_reason : undefined,
    promptTokens: typeof line.prompt_eval_count === "number" ? line.prompt_eval_count : undefined,
    completionTokens: typeof line.eval_count === "number" ? line.eval_count : undefined,
    error: typeof line.error === "string" ? line.error : undefined,
  };
}

const callId = (): string => `call_${randomBytes(12).toString("hex")}`;

/** `done_reason` as an OpenAI finish reason. */
function finishReason(line: OllamaLine, sawCalls: boolean): string {
  if (sawCalls) return "tool_calls";
  return line.doneReason === "length" ? "length" : "stop";
}

/** Ollama's NDJSON stream as OpenAI SSE chunks. */
function sseFromNdjson(upstream: Response, model: string): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const id = `chatcmpl-${randomBytes(8).toString("hex")}`;
  const created = Math.floor(Date.now() / 1000);
  const event = (payload: Json): Uint8Array => encoder.encode(`data: ${JSON.stringify(payload)}\n\n`);
  const chunk = (choices: Json[], extra: Json = {}): Uint8Array =>
    event({ id, object: "chat.completion.chunk", created, model, choices, ...extra });
  const reader = (upstream.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let buffered = "";
  let index = 0;
  let finished = false;

  const translate = (raw: string): Uint8Array[] => {
    if (!raw.trim()) return [];
    let line: OllamaLine;
    try {
      line = fromOllamaLine(JSON.parse(raw) as Json);
    } catch {
      return [];
    }
    if (line.error !== undefined) {
      finished = true;
      return [event({ error: { code: 500, message: line.error, type: "server_error" } })];
    }
    const out: Uint8Array[] = [];
    const delta: Json = {};
    if (line.thinking) delta.reasoning_content = line.thinking;
    if (line.content) delta.content = line.content;
    if (line.toolCalls.length) {
      delta.tool_calls = line.toolCalls.map((c) => ({ index: index++, id: callId(), type: "function", function: c }));
    }
    if (Object.keys(delta).length) out.push(chunk([{ index: 0, delta, finish_reason: null }]));
    if (line.done) {
      finished = true;
      out.push(chunk([{ index: 0, delta: {}, finish_reason: finishReason(line, index > 0) }]));
      out.push(chunk([], { usage: usageOf(line) }));
      out.push(encoder.encode("data: [DONE]\n\n"));
    }
    return out;
  };

  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) {
          for (const bytes of translate(buffered)) controller.enqueue(bytes);
          buffered = "";
          controller.close();
          return;
        }
        buffered += decoder.decode(value, { stream: true });
        const lines = buffered.split("\n");
        buffered = lines.pop() ?? "";
        const out = lines.flatMap(translate);
        for (const bytes of out) controller.enqueue(bytes);
        if (finished) {
          await reader.cancel();
          controller.close();
          return;
        }
        if (out.length) return;
      }
    },
    cancel: (reason) => reader.cancel(reason),
  });
}

/** A whole Ollama answer (`stream: false`) as one chat.completion. */
function completionResponse(line: OllamaLine, model: unknown): Response {
  const message: Json = { role: "assistant", content: line.content };
  if (line.thinking) message.reasoning_content = line.thinking;
  if (line.toolCalls.length)
    message.tool_calls = line.toolCalls.map((c) => ({ id: callId(), type: "function", function: c }));
  return Response.json({
    id: `chatcmpl-${randomBytes(8).toString("hex")}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message, finish_reason: finishReason(line, line.toolCalls.length > 0) }],
    usage: usageOf(line),
  });
}

/** The OpenAI usage of Ollama's last line. */
function usageOf(line: OllamaLine): Json {
  const prompt = line.promptTokens ?? 0;
  const completion = line.completionTokens ?? 0;
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

/** Ollama's `{"error": "…"}` with its status, as the OpenAI error body the SDK and model-error.ts read. */
async function errorResponse(upstream: Response): Promise<Response> {
  const text = await upstream.text().catch(() => "");
  let message = text.slice(0, 500) || `HTTP ${upstream.status}`;
  try {
    const parsed = JSON.parse(text) as { error?: unknown };
    if (typeof parsed.error === "string") message = parsed.error;
  } catch {
    // Not JSON (a proxy's page): its first words are the message.
  }
  return Response.json(
    {
      error: { code: upstream.status, message, type: upstream.status < 500 ? "invalid_request_error" : "server_error" },
    },
    { status: upstream.status },
  );
}
