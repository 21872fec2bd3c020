/** The model's context size, asked once per process: the token budget counts with it, Ollama requests carry it as `num_ctx`. */
import type { Config } from "../config/env-schema.js";
import { cachedContextWindow, resolveContextWindow, type ContextWindow } from "../tokens/context-window.js";
import { serverRootOf } from "../tokens/server-tokenizer.js";

/** The process's context window source. */
export function contextWindowFor(config: Config): () => Promise<ContextWindow> {
  return cachedContextWindow(() =>
    resolveContextWindow({
      configured: config.MODEL_CONTEXT_TOKENS,
      serverRoot: serverRootOf(config.OPENAI_BASE_URL),
      apiKey: config.OPENAI_API_KEY,
      // Ollama's context is per request (num_ctx): the figure comes from MODEL's /api/show, not /props.
      ...(config.MODEL_SERVER === "ollama" ? { ollamaModel: config.MODEL } : {}),
    }),
  );
}
