/** The OpenAI-compatible client every model request goes through. */
import OpenAI from "openai";

/** Settings for the model client (OPENAI_BASE_URL, OPENAI_API_KEY, MODEL_TIMEOUT_MS). */
export interface ModelClientOptions {
  baseURL: string;
  apiKey: string;
  /** Time allowed until the response headers arrive; the agent also uses it as the idle limit between chunks. */
  timeoutMs: number;
  /** Injected for tests and proxies; by default Node's global fetch. */
  fetch?: typeof fetch;
}

/** Builds the SDK client with retries off: the queue owns retrying, with backoff and a visible reply. */
export function createModelClient(opts: ModelClientOptions): OpenAI {
  return new OpenAI({
    baseURL: opts.baseURL,
    apiKey: opts.apiKey,
    timeout: opts.timeoutMs,
    maxRetries: 0,
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
  });
}
