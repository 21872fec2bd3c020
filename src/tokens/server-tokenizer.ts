/** llama.cpp's tokenizer over HTTP: `POST /tokenize {"content": …}` answers `{"tokens": [ids…]}`. */
import { withDeadline } from "../shared/deadline.js";
import type { TextTokenizer } from "./text-tokenizer.js";

export { serverRoot as serverRootOf } from "../shared/server-root.js";

/** A failure of the server's tokenizer (not offered, down, or an answer that is not one). */
export class TokenizeError extends Error {
  override readonly name = "TokenizeError";
  /** `notOffered`: the server has no such endpoint, so asking again is pointless. */
  constructor(
    message: string,
    readonly notOffered: boolean,
  ) {
    super(message);
  }
}

/** Counts with the server's `/tokenize`; throws TokenizeError when it cannot. */
export function createServerTokenizer(opts: {
  serverRoot: string;
  /** OPENAI_API_KEY: a llama-server started with `--api-key` wants it on /tokenize too. */
  apiKey?: string;
  timeoutMs?: number;
  fetch?: typeof fetch;
}): TextTokenizer {
  const doFetch = opts.fetch ?? fetch;
  const timeoutMs = opts.timeoutMs ?? 5000;
  let answered = false;
  let probing: Promise<boolean> | undefined;
  const tokenizer: TextTokenizer = {
    source: "server",
    // Until the server has answered once, a count on a reply's way does not wait for it.
    isReady: () => answered,
    warm() {
      probing ??= tokenizer
        .count("warm-up")
        .then(() => true)
        .catch(() => false)
        .finally(() => {
          probing = undefined;
        });
      return probing;
    },
    count(text, signal) {
      // Held for the whole call, body included: AbortSignal.timeout combined with the caller's signal can be collected.
      return withDeadline(timeoutMs, (combined) => countOnServer(text, combined), signal);
    },
  };

  async function countOnServer(text: string, combined: AbortSignal): Promise<number> {
    let response: Response;
    try {
      response = await doFetch(`${opts.serverRoot}/tokenize`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          ...(opts.apiKey ? { authorization: `Bearer ${opts.apiKey}` } : {}),
        },
        body: JSON.stringify({ content: text, add_special: false, parse_special: true }),
        signal: combined,
      });
    } catch (error) {
      throw new TokenizeError(`tokenize request failed: ${(error as Error).message}`, false);
    }
    // 404/405/501: no such endpoint. 400/422: a /tokenize of another dialect (vLLM wants `prompt`): not llama.cpp's.
    // 401/403: the key is refused, which no retry fixes.
    if ([400, 401, 403, 404, 405, 422, 501].includes(response.status)) {
      await response.body?.cancel();
      throw new TokenizeError(`the model server offers no llama.cpp /tokenize (HTTP ${response.status})`, true);
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw new TokenizeError(`tokenize answered HTTP ${response.status}`, false);
    }
    const body = (await response.json().catch(() => undefined)) as { tokens?: unknown } | undefined;
    if (!body || !Array.isArray(body.tokens)) throw new TokenizeError("tokenize answered without a tokens array", true);
    answered = true;
    return body.tokens.length;
  }
  return tokenizer;
}
