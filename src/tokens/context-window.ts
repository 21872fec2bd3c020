/**
 * The context every request must fit: MODEL_CONTEXT_TOKENS when set, else what a llama.cpp
 * server reports in `GET /props` (`default_generation_settings.n_ctx`, or a top-level `n_ctx`
 * on older builds), else 8192.
 */
import { withDeadline } from "../shared/deadline.js";

/** The context size used when neither the setting nor the server says. */
export const DEFAULT_CONTEXT_TOKENS = 8192;

/** Where the context size came from. */
export interface ContextWindow {
  tokens: number;
  source: "config" | "server" | "default";
}

/** Reads `n_ctx` from a `/props` body; undefined when it has none. */
export function contextTokensFromProps(body: unknown): number | undefined {
  if (typeof body !== "object" || body === null) return undefined;
  const props = body as { n_ctx?: unknown; default_generation_settings?: { n_ctx?: unknown } };
  const value = props.default_generation_settings?.n_ctx ?? props.n_ctx;
  return typeof value === "number" && Number.isInteger(value) && value > 0 ? value : undefined;
}

/** Resolves the context size once (the caller keeps the answer). */
export async function resolveContextWindow(opts: {
  configured?: number | undefined;
  serverRoot: string;
  /** OPENAI_API_KEY: a llama-server started with `--api-key` wants it on /props too. */
  apiKey?: string;
  fetch?: typeof fetch;
  timeoutMs?: number;
}): Promise<ContextWindow> {
  if (opts.configured !== undefined) return { tokens: opts.configured, source: "config" };
  try {
    // The deadline covers the body too, and is held for the whole call (AbortSignal.timeout is not).
    const tokens = await withDeadline(opts.timeoutMs ?? 5000, async (signal) => {
      const response = await (opts.fetch ?? fetch)(`${opts.serverRoot}/props`, {
        headers: opts.apiKey ? { authorization: `Bearer ${opts.apiKey}` } : {},
        signal,
      });
      if (response.ok) return contextTokensFromProps(await response.json());
      await response.body?.cancel();
      return undefined;
    });
    if (tokens !== undefined) return { tokens, source: "server" };
  } catch {
    // No /props (vLLM, Ollama, a hosted API) or the server is not up yet: the default is the answer.
  }
  return { tokens: DEFAULT_CONTEXT_TOKENS, source: "default" };
}
