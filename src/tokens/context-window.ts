/**
 * The context every request must fit: MODEL_CONTEXT_TOKENS, else what the server says (llama.cpp's `GET /props`),
 * else 8192. Ollama allocates what each request's `num_ctx` asks, so its figure comes from `POST /api/show`: the
 * Modelfile's `num_ctx`, else the trained context length capped at 8192 (Qwen3's 40960 costs gigabytes of KV cache).
 */
import { withDeadline } from "../shared/deadline.js";

/** The context size used when neither the setting nor the server says. */
export const DEFAULT_CONTEXT_TOKENS = 8192;
/** The most an Ollama model's trained context length is taken at, when its Modelfile sets no num_ctx. */
export const OLLAMA_TRAINED_CONTEXT_CAP = 8192;

/** Where the context size came from. */
export interface ContextWindow {
  tokens: number;
  source: "config" | "server" | "default";
  /** How the server's figure was read (for the log and the doctor), e.g. "num_ctx in the Modelfile". */
  detail?: string;
}

const positiveInteger = (value: unknown): number | undefined =>
  typeof value === "number" && Number.isInteger(value) && value > 0 ? value : undefined;

/** Reads `n_ctx` from a `/props` body; undefined when it has none. */
export function contextTokensFromProps(body: unknown): number | undefined {
  if (typeof body !== "object" || body === null) return undefined;
  const props = body as { n_ctx?: unknown; default_generation_settings?: { n_ctx?: unknown } };
  return positiveInteger(props.default_generation_settings?.n_ctx ?? props.n_ctx);
}

/** Reads Ollama's `/api/show` body: `num_ctx` of `parameters`, else the capped `<arch>.context_length`. */
export function contextWindowFromOllamaShow(body: unknown): Omit<ContextWindow, "source"> | undefined {
  if (typeof body !== "object" || body === null) return undefined;
  const show = body as { parameters?: unknown; model_info?: Record<string, unknown> };
  if (typeof show.parameters === "string") {
    const match = /^\s*num_ctx\s+"?(\d+)"?\s*$/m.exec(show.parameters);
    const tokens = positiveInteger(Number(match?.[1]));
    if (tokens !== undefined) return { tokens, detail: "num_ctx in the Modelfile" };
  }
  const info = show.model_info;
  if (typeof info !== "object" || info === null) return undefined;
  const arch = info["general.architecture"];
  const key =
    typeof arch === "string" && `${arch}.context_length` in info
      ? `${arch}.context_length`
      : Object.keys(info).find((k) => k.endsWith(".context_length"));
  const trained = key === undefined ? undefined : positiveInteger(info[key]);
  if (trained === undefined) return undefined;
  const tokens = Math.min(trained, OLLAMA_TRAINED_CONTEXT_CAP);
  return {
    tokens,
    detail:
      trained > tokens
        ? `trained context_length ${trained}, capped at ${OLLAMA_TRAINED_CONTEXT_CAP}`
        : `trained context_length ${trained}`,
  };
}

/** Resolves the context size once (the caller keeps the answer). */
export async function resolveContextWindow(opts: {
  configured?: number | undefined;
  serverRoot: string;
  /** OPENAI_API_KEY: a llama-server started with `--api-key` wants it on /props too. */
  apiKey?: string;
  /** With MODEL_SERVER=ollama: the model whose `/api/show` is read (instead of `/props`). */
  ollamaModel?: string;
  fetch?: typeof fetch;
  timeoutMs?: number;
}): Promise<ContextWindow> {
  if (opts.configured !== undefined) return { tokens: opts.configured, source: "config" };
  const auth: Record<string, string> = opts.apiKey ? { authorization: `Bearer ${opts.apiKey}` } : {};
  const doFetch = opts.fetch ?? fetch;
  try {
    // The deadline covers the body too, and is held for the whole call (AbortSignal.timeout is not).
    const found = await withDeadline(opts.timeoutMs ?? 5000, async (signal) => {
      const response =
        opts.ollamaModel !== undefined
          ? await doFetch(`${opts.serverRoot}/api/show`, {
              method: "POST",
              headers: { ...auth, "content-type": "application/json" },
              body: JSON.stringify({ model: opts.ollamaModel }),
              signal,
            })
          : await doFetch(`${opts.serverRoot}/props`, { headers: auth, signal });
      if (!response.ok) {
        await response.body?.cancel();
        return undefined;
      }
      const body = await response.json();
      if (opts.ollamaModel !== undefined) return contextWindowFromOllamaShow(body);
      const tokens = contextTokensFromProps(body);
      return tokens === undefined ? undefined : { tokens };
    });
    if (found !== undefined) return { ...found, source: "server" };
  } catch {
    // No /props (vLLM, a hosted API), no such model, or the server is not up yet: the default is the answer.
  }
  return { tokens: DEFAULT_CONTEXT_TOKENS, source: "default" };
}

/** A server that did not say its context size is asked again after this long (it may have been starting). */
const RETRY_DEFAULT_MS = 60_000;

/** One process's context size (the budget and Ollama's `num_ctx` agree); a default is asked again after a minute. */
export function cachedContextWindow(
  resolve: () => Promise<ContextWindow>,
  opts: { now?: () => number; retryMs?: number } = {},
): () => Promise<ContextWindow> {
  const now = opts.now ?? Date.now;
  const retryMs = opts.retryMs ?? RETRY_DEFAULT_MS;
  let kept: { value: Promise<ContextWindow>; at: number; settled?: ContextWindow } | undefined;
  return () => {
    if (!kept || (kept.settled?.source === "default" && now() - kept.at > retryMs)) {
      const entry: NonNullable<typeof kept> = { value: resolve(), at: now() };
      void entry.value.then((window) => (entry.settled = window));
      kept = entry;
    }
    return kept.value;
  };
}
