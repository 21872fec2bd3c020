/**
 * The one error the agent loop throws: the model server failed (not a tool, not the user); the queue reads
 * `retryable`. Everything else inside the loop is data, not an exception.
 */
import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from "openai";

/** What went wrong, in words a retry policy and a user message can switch on. */
export type ModelErrorCode =
  | "unavailable" // connection refused / reset / DNS: nothing answered
  | "timeout" // no response, or no bytes for too long mid-stream
  | "server-error" // HTTP 5xx
  | "rate-limited" // HTTP 429
  | "context-exceeded" // the prompt does not fit the model's context window
  | "images-unsupported" // pictures were sent to a model (or server) that takes none
  | "auth" // HTTP 401/403: a wrong OPENAI_API_KEY never fixes itself
  | "bad-request" // other HTTP 4xx: our request is wrong, retrying sends it again
  | "stream-error" // the server sent an error event inside a 200 stream
  | "stream-dropped" // the connection closed before the stream ended
  | "bad-response"; // bytes that are not the protocol (unparseable chunk)

/** Faults no retry fixes: the same request meets the same refusal. */
const FINAL_CODES = new Set<ModelErrorCode>(["context-exceeded", "images-unsupported", "auth", "bad-request"]);

/** A model-server fault, thrown out of the agent loop so the queue can retry. */
export class ModelError extends Error {
  override readonly name = "ModelError";
  readonly code: ModelErrorCode;
  readonly retryable: boolean;
  readonly status: number | undefined;
  /** From a `Retry-After` header (429/503), when the server sent one. */
  readonly retryAfterMs: number | undefined;
  /** `context-exceeded`: by how many tokens the request was over, when the server said. */
  readonly excessTokens: number | undefined;

  constructor(
    code: ModelErrorCode,
    message: string,
    options: {
      retryable?: boolean;
      status?: number;
      retryAfterMs?: number;
      excessTokens?: number;
      cause?: unknown;
    } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.status = options.status;
    this.retryAfterMs = options.retryAfterMs;
    this.excessTokens = options.excessTokens;
    this.retryable = options.retryable ?? !FINAL_CODES.has(code);
  }
}

/** Each server's words for a prompt over the context: llama.cpp, vLLM, Ollama, OpenAI and LM Studio. */
function isContextExceeded(error: APIError): boolean {
  const type = typeof error.type === "string" ? error.type : "";
  const code = typeof error.code === "string" ? error.code : "";
  return (
    type === "exceed_context_size_error" ||
    code === "context_length_exceeded" ||
    /context (length|size|window)|maximum context|exceeds the available context|too many tokens|prompt too long/i.test(
      error.message,
    )
  );
}

/** How many tokens a refused request was over, as llama.cpp's fields or vLLM's and Ollama's words say. */
function excessTokensOf(error: APIError): number | undefined {
  const body = (typeof error.error === "object" && error.error !== null ? error.error : {}) as {
    n_prompt_tokens?: unknown;
    n_ctx?: unknown;
  };
  if (typeof body.n_prompt_tokens === "number" && typeof body.n_ctx === "number")
    return Math.max(1, body.n_prompt_tokens - body.n_ctx);
  const vllm = /maximum context length is (\d+) tokens\. However, you requested (\d+) tokens/i.exec(error.message);
  if (vllm) return Math.max(1, Number(vllm[2]) - Number(vllm[1]));
  const ollama = /exceeded max context length by (\d+) tokens/i.exec(error.message);
  return ollama ? Number(ollama[1]) : undefined;
}

/** Maps what the SDK (or the fetch under it) threw; callers check their signal first: a user abort is no fault. */
export function toModelError(error: unknown): ModelError {
  if (error instanceof ModelError) return error;
  const fault = (code: ModelErrorCode, message: string, extra: ConstructorParameters<typeof ModelError>[2] = {}) =>
    new ModelError(code, message, { ...extra, cause: error });
  if (error instanceof APIConnectionTimeoutError) return fault("timeout", "The model server did not answer in time.");
  // Only reachable when our own idle timer aborted the request.
  if (error instanceof APIUserAbortError) return fault("timeout", "The model server stopped sending data.");
  if (error instanceof APIConnectionError) {
    const detail = describeCause(error);
    return fault("unavailable", `Cannot reach the model server${detail ? ` (${detail})` : ""}.`);
  }
  if (error instanceof APIError) {
    const status = error.status;
    // The SDK raises a bare APIError for a `data: {"error": …}` event inside a 200 stream.
    if (status === undefined) return fault("stream-error", `The model server failed mid-answer: ${error.message}`);
    const detail = `${status} ${error.message.replace(/^\d{3}\s+/, "")}`;
    // llama.cpp without an mmproj answers 500 "image input is not supported"; hosted servers a 400 in their words.
    if (
      (status === 400 || status === 500) &&
      /image input is not supported|does not support image|image_url is only supported|vision is not supported/i.test(
        error.message,
      )
    )
      return fault("images-unsupported", `The model does not take pictures: ${detail}`, { status });
    if (status === 400 && isContextExceeded(error)) {
      const excessTokens = excessTokensOf(error);
      return fault("context-exceeded", `The conversation is too long for the model: ${detail}`, {
        status,
        excessTokens,
      });
    }
    const retryAfterMs = parseRetryAfter(error.headers?.get("retry-after"));
    if (status === 429) return fault("rate-limited", `The model server is busy: ${detail}`, { status, retryAfterMs });
    if (status === 401 || status === 403)
      return fault("auth", `The model server refused the key: ${detail}`, { status });
    if (status === 408) return fault("timeout", `The model server timed out: ${detail}`, { status });
    if (status >= 500) return fault("server-error", `The model server failed: ${detail}`, { status, retryAfterMs });
    return fault("bad-request", `The model server rejected the request: ${detail}`, { status });
  }
  if (error instanceof SyntaxError)
    return fault("bad-response", `The model server sent something that is not JSON: ${error.message}`);
  // fetch reports a connection closed mid-body as `TypeError: terminated`, the socket's error (undici: "other side
  // closed") as its cause.
  const detail = describeCause(error);
  return fault("stream-dropped", `The connection to the model server broke mid-answer${detail ? ` (${detail})` : ""}.`);
}

/** The innermost useful message: fetch hides ECONNREFUSED one or two causes deep. */
function describeCause(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current instanceof Error; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string") parts.push(code);
    else if (current.message && !parts.includes(current.message)) parts.push(current.message);
    current = current.cause;
  }
  return parts.slice(-2).join(": ");
}

/** Retry-After is seconds or an HTTP date. */
function parseRetryAfter(value: string | null | undefined): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.round(seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}
