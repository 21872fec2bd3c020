/** The OpenAI-compatible client every model request goes through. */
import OpenAI from "openai";
import type { ModelServer } from "./model-dialect.js";
import { undiciFetch } from "../shared/undici-fetch.js";
import { createOllamaFetch } from "./ollama-fetch.js";
import { serverRoot } from "../shared/server-root.js";

/** Settings for the model client (OPENAI_BASE_URL, OPENAI_API_KEY, MODEL_TIMEOUT_MS). */
export interface ModelClientOptions {
  baseURL: string;
  apiKey: string;
  /** Time allowed until the response headers arrive; the agent also uses it as the idle limit between chunks. */
  timeoutMs: number;
  /** Injected for tests and proxies; by default undici's `request()` behind a `fetch` (shared/undici-fetch.ts). */
  fetch?: typeof fetch;
  /** MODEL_SERVER: `ollama` talks to Ollama's native `/api/chat` (ollama-fetch.ts) instead of its `/v1`. */
  server?: ModelServer;
  /** Ollama's `num_ctx`: the context the budget counts with; a function is asked per request. */
  contextTokens?: number | (() => Promise<number>);
  /** Ollama's `keep_alive` (MODEL_KEEP_ALIVE). */
  keepAlive?: string;
}

/** The budget's own default when neither MODEL_CONTEXT_TOKENS nor the server says (tokens/context-window.ts). */
const OLLAMA_DEFAULT_CONTEXT = 8192;

/** Builds the SDK client with retries off: the queue owns retrying, with backoff and a visible reply. */
export function createModelClient(opts: ModelClientOptions): OpenAI {
  return new OpenAI({
    baseURL: opts.baseURL,
    apiKey: opts.apiKey,
    timeout: opts.timeoutMs,
    maxRetries: 0,
    ...(opts.server === "ollama"
      ? {
          fetch: createOllamaFetch({
            serverRoot: serverRoot(opts.baseURL),
            contextTokens: opts.contextTokens ?? OLLAMA_DEFAULT_CONTEXT,
            ...(opts.keepAlive ? { keepAlive: opts.keepAlive } : {}),
            fetch: opts.fetch ?? fetch,
          }),
        }
      : { fetch: opts.fetch ?? undiciFetch }),
  });
}
