/**
 * GET from an operator-configured backend (weather, news, search): plain `fetch`, since those URLs
 * are trusted configuration, not model input; with a deadline, a size cap and failures worded for the model.
 */
import { readCapped } from "../shared/read-capped.js";
import { networkErrorWords } from "./network-error-words.js";
import { ToolError } from "./tool-error.js";
import { cutText } from "../shared/text-cut.js";

/** Options for one backend request. */
interface BackendFetchOptions {
  /** Default: the global fetch. */
  fetch?: typeof fetch;
  /** Names the service in errors ("weather service"). */
  service: string;
  timeoutMs: number;
  maxBytes: number;
  signal?: AbortSignal;
  accept?: string;
}

/** A backend answer: status, media type and the decoded text (cut at the size cap). */
interface BackendResponse {
  status: number;
  contentType: string;
  text: string;
  truncated: boolean;
}

/** Fetches `url` with a timeout and size cap; throws ToolError with a short reason on failure. */
export async function backendFetch(url: string, options: BackendFetchOptions): Promise<BackendResponse> {
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), options.timeoutMs);
  const onAbort = () => deadline.abort();
  options.signal?.addEventListener("abort", onAbort, { once: true });
  if (options.signal?.aborted) deadline.abort();
  try {
    const res = await (options.fetch ?? fetch)(url, {
      signal: deadline.signal,
      redirect: "follow",
      headers: { accept: options.accept ?? "*/*", "user-agent": "local-llm-chatbot/0.1" },
    });
    const { bytes, truncated } = await readCapped(res, options.maxBytes);
    const contentType = res.headers.get("content-type") ?? "";
    return {
      status: res.status,
      contentType: contentType.split(";")[0]!.trim().toLowerCase(),
      text: decode(bytes, contentType),
      truncated,
    };
  } catch (err) {
    if (err instanceof ToolError) throw err;
    if (options.signal?.aborted) throw new ToolError(`${options.service} request aborted`);
    if (deadline.signal.aborted)
      throw new ToolError(`${options.service} timed out after ${Math.round(options.timeoutMs / 100) / 10}s`);
    throw new ToolError(`${options.service} is unreachable (${reason(err)})`);
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", onAbort);
  }
}

function decode(bytes: Uint8Array, contentType: string): string {
  const charset = contentType.match(/charset\s*=\s*"?([^";\s]+)/i)?.[1] ?? xmlDeclaredEncoding(bytes) ?? "utf-8";
  try {
    return new TextDecoder(charset).decode(bytes);
  } catch {
    // An unknown charset label: UTF-8 is the best guess and never throws.
    return new TextDecoder("utf-8").decode(bytes);
  }
}

/** The encoding named in an `<?xml … encoding="…"?>` declaration, for feeds that only say it there. */
function xmlDeclaredEncoding(bytes: Uint8Array): string | undefined {
  const head = new TextDecoder("latin1").decode(bytes.subarray(0, 200));
  return head.match(/^\s*<\?xml[^>]*encoding\s*=\s*["']([A-Za-z0-9._-]+)["']/)?.[1];
}

/** undici hides the network error in `cause`; turn its code into words. */
function reason(err: unknown): string {
  const cause = (err as { cause?: { code?: unknown; message?: unknown } } | undefined)?.cause;
  if (cause && typeof cause.code === "string") return networkErrorWords(cause.code);
  if (cause && typeof cause.message === "string") return cutText(cause.message, 120);
  return cutText(err instanceof Error ? err.message : String(err), 120);
}
