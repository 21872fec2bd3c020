/**
 * A fake Ollama server on 127.0.0.1, following Ollama's API docs (docs/api.md): `POST /api/chat`
 * streaming NDJSON (one JSON object a line: `message.thinking` and `message.content` pieces, a
 * tool call whole in one line, then `done: true` with `done_reason` and the eval counts) or one
 * object with `stream: false`; `POST /api/show` (`parameters` text with the Modelfile's `num_ctx`
 * line when it sets one, `model_info.<arch>.context_length`, `capabilities`); `GET /api/tags` (the
 * pulled models); `GET /api/version`; `GET /v1/models` as Ollama's OpenAI-compatible listing (every
 * other `/v1` path is refused here, and recorded: the bot must not chat through `/v1`); errors as
 * `{"error": "…"}` with Ollama's statuses (404 unknown model, 400 a model that cannot think asked
 * to). Every chat and show request is recorded.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

/** What the fake model answers to one request. */
export interface OllamaPlan {
  thinking?: string;
  content?: string;
  toolCalls?: Array<{ name: string; arguments: Record<string, unknown> }>;
  doneReason?: "stop" | "length";
  /** Ends the stream after the content with Ollama's mid-stream error line (`{"error": "…"}`) instead of `done`. */
  streamError?: string;
  /** Pause between lines (ms). */
  gapMs?: number;
}

/** One recorded `/api/chat` request. */
export interface OllamaRequest {
  index: number;
  body: Record<string, any>;
  /** The request's `authorization` header, if any. */
  authorization?: string;
  /** Settles when the response is over: `client-closed` when the client went away first. */
  outcome: Promise<"completed" | "client-closed">;
}

/** A running fake. */
export interface FakeOllama {
  /** OPENAI_BASE_URL as an operator writes it for Ollama (`…/v1`). */
  url: string;
  origin: string;
  requests: OllamaRequest[];
  /** `/v1/…` requests (the bot should not chat through them with MODEL_SERVER=ollama). */
  openAiRequests: string[];
  /** The model of every `/api/show` request, in order. */
  shows: string[];
  close(): Promise<void>;
}

/** Starts the fake; `answer` decides each chat request's answer. */
export async function startFakeOllama(opts: {
  answer: (request: OllamaRequest) => OllamaPlan;
  /** Models it has (default `qwen3:1.7b`). */
  models?: string[];
  /** Model capabilities (default completion, tools, thinking). */
  capabilities?: string[];
  /** `<arch>.context_length` of `/api/show` (default 40960, Qwen3's). */
  contextLength?: number;
  /** The Modelfile's `num_ctx` (a line of `/api/show`'s `parameters`); default: none. */
  numCtx?: number;
}): Promise<FakeOllama> {
  const models = opts.models ?? ["qwen3:1.7b"];
  const capabilities = opts.capabilities ?? ["completion", "tools", "thinking"];
  const requests: OllamaRequest[] = [];
  const openAiRequests: string[] = [];
  const shows: string[] = [];
  const sockets = new Set<Socket>();

  const server = createServer((req, res) => {
    void route(req, res).catch((error: unknown) => {
      if (!res.headersSent) json(res, 500, { error: String(error) });
      else res.destroy();
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const parts: Buffer[] = [];
    for await (const part of req) parts.push(part as Buffer);
    const raw = Buffer.concat(parts).toString("utf8");
    const path = (req.url ?? "/").split("?")[0];
    if (req.method === "GET" && path === "/api/version") return json(res, 200, { version: "0.12.6" });
    if (req.method === "GET" && path === "/api/tags")
      return json(res, 200, {
        models: models.map((name) => ({
          name,
          model: name,
          modified_at: "2026-11-30T10:00:00.000000000Z",
          size: 1_359_293_011,
          digest: "8f68893c685c3ddff2aa3fffce2aa60a30bb2da65ca488b61fff134a4d1730e7",
          details: { format: "gguf", family: "qwen3", parameter_size: "2.0B", quantization_level: "Q4_K_M" },
        })),
      });
    if (path?.startsWith("/v1/")) {
      openAiRequests.push(path);
      if (req.method === "GET" && path === "/v1/models")
        return json(res, 200, {
          object: "list",
          data: models.map((id) => ({ id, object: "model", created: 1_764_496_800, owned_by: "library" })),
        });
      return json(res, 404, { error: "the fake Ollama serves only its native API here" });
    }
    let body: Record<string, any>;
    try {
      body = raw ? (JSON.parse(raw) as Record<string, any>) : {};
    } catch {
      return json(res, 400, { error: "invalid character 'x' looking for beginning of value" });
    }
    if (req.method === "POST" && path === "/api/show") {
      shows.push(String(body.model));
      if (!models.includes(body.model)) return json(res, 404, { error: `model '${body.model}' not found` });
      // Ollama pads the parameter names to a column; a value is quoted only when it is a string.
      const parameters = [
        ...(opts.numCtx !== undefined ? [`num_ctx                        ${opts.numCtx}`] : []),
        'stop                           "<|im_start|>"',
        'stop                           "<|im_end|>"',
        "temperature                    0.6",
        "top_k                          20",
        "top_p                          0.95",
      ].join("\n");
      return json(res, 200, {
        parameters,
        details: { format: "gguf", family: "qwen3", parameter_size: "2.0B", quantization_level: "Q4_K_M" },
        model_info: { "general.architecture": "qwen3", "qwen3.context_length": opts.contextLength ?? 40960 },
        capabilities,
      });
    }
    if (req.method !== "POST" || path !== "/api/chat") return json(res, 404, { error: "404 page not found" });
    if (!models.includes(body.model))
      return json(res, 404, { error: `model "${body.model}" not found, try pulling it first` });
    if (body.think === true && !capabilities.includes("thinking"))
      return json(res, 400, { error: `"${body.model}" does not support thinking` });
    // api.Duration: a number is seconds (negative: forever), a string must parse as a Go duration ("-1" does not).
    const keepAlive: unknown = body.keep_alive;
    if (typeof keepAlive === "string" && !/^[-+]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h))+$|^0$/.test(keepAlive))
      return json(res, 400, {
        error: `time: ${/\d$/.test(keepAlive) ? "missing unit in" : "invalid"} duration "${keepAlive}"`,
      });
    if (keepAlive !== undefined && typeof keepAlive !== "string" && typeof keepAlive !== "number")
      return json(res, 400, { error: `Unsupported type: '${typeof keepAlive}'` });

    let settle: (o: "completed" | "client-closed") => void = () => undefined;
    const outcome = new Promise<"completed" | "client-closed">((resolve) => (settle = resolve));
    res.on("close", () => settle(res.writableFinished ? "completed" : "client-closed"));
    const record: OllamaRequest = {
      index: requests.length,
      body,
      ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}),
      outcome,
    };
    requests.push(record);
    const plan = opts.answer(record);
    const lines = planLines(plan, body);
    if (body.stream === false) {
      const merged = lines.reduce<Record<string, any>>(
        (all, line) => ({
          ...line,
          message: {
            role: "assistant",
            content: `${all.message?.content ?? ""}${line.message?.content ?? ""}`,
            ...((all.message?.thinking ?? "") + (line.message?.thinking ?? "")
              ? { thinking: `${all.message?.thinking ?? ""}${line.message?.thinking ?? ""}` }
              : {}),
            ...(line.message?.tool_calls || all.message?.tool_calls
              ? { tool_calls: [...(all.message?.tool_calls ?? []), ...(line.message?.tool_calls ?? [])] }
              : {}),
          },
        }),
        {},
      );
      return json(res, 200, merged);
    }
    res.writeHead(200, { "Content-Type": "application/x-ndjson" });
    for (const line of lines) {
      if (res.destroyed) return;
      res.write(`${JSON.stringify(line)}\n`);
      if (plan.gapMs) await new Promise((resolve) => setTimeout(resolve, plan.gapMs));
    }
    res.end();
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `${origin}/v1`,
    origin,
    requests,
    openAiRequests,
    shows,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The NDJSON lines of a plan: thinking and content a word a line, tool calls whole in one line, then `done`. */
function planLines(plan: OllamaPlan, body: Record<string, any>): Array<Record<string, any>> {
  const at = () => new Date().toISOString();
  const line = (message: Record<string, unknown>) => ({
    model: body.model,
    created_at: at(),
    message: { role: "assistant", content: "", ...message },
    done: false,
  });
  const words = (text: string) => text.match(/\S+\s*|\s+/g) ?? [];
  const out: Array<Record<string, any>> = [];
  // Ollama sends `thinking` only when asked to think.
  if (plan.thinking && body.think === true) for (const w of words(plan.thinking)) out.push(line({ thinking: w }));
  for (const w of words(plan.content ?? "")) out.push(line({ content: w }));
  if (plan.toolCalls?.length)
    out.push(line({ tool_calls: plan.toolCalls.map((c) => ({ function: { name: c.name, arguments: c.arguments } })) }));
  if (plan.streamError !== undefined) {
    out.push({ error: plan.streamError });
    return out;
  }
  const promptTokens = Math.ceil(JSON.stringify(body.messages ?? []).length / 4);
  out.push({
    model: body.model,
    created_at: at(),
    message: { role: "assistant", content: "" },
    done_reason: plan.doneReason ?? "stop",
    done: true,
    total_duration: 1_000_000,
    load_duration: 100_000,
    prompt_eval_count: promptTokens,
    prompt_eval_duration: 200_000,
    eval_count: out.length,
    eval_duration: 500_000,
  });
  return out;
}

function json(res: ServerResponse, status: number, value: unknown): void {
  const text = JSON.stringify(value);
  res.writeHead(status, {
    "Content-Type": "application/json; charset=utf-8",
    "Content-Length": Buffer.byteLength(text),
  });
  res.end(text);
}
