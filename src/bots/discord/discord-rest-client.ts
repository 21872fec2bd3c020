/**
 * A small Discord REST client over fetch for replying without a gateway connection (workers).
 *
 * Why not @discordjs/rest here: its queue waits out 429s and exhausted buckets by sleeping, so
 * edits would pile up behind each other and land stale; and its RateLimitError carries the
 * rounded-up Retry-After header rather than the body's exact retry_after. Our reply editor
 * paces itself and always sends the newest text, so this client never queues: a request the
 * headers say would be refused, or a 429, becomes RateLimitedError(ms) at once.
 */
import { RateLimitedError } from "../../contracts/reply-port.js";
import { createRateLimitTracker, type RateLimitTracker } from "./discord-rate-limits.js";

/** Discord answered with an error status (4xx: permanent for this request; 5xx: transient). */
export class DiscordApiError extends Error {
  override readonly name = "DiscordApiError";
  constructor(
    readonly status: number,
    /** Discord's JSON error code (50035 invalid form body, 10008 unknown message, …); 0 when none. */
    readonly code: number,
    readonly method: string,
    /** The API path, e.g. /channels/1/messages (never contains the bot token). */
    readonly path: string,
    message: string,
    readonly errors?: unknown,
  ) {
    super(`Discord ${status}${code ? ` (${code})` : ""} on ${method} ${path}: ${message}`);
  }

  /** 5xx: Discord or its edge failed; the same request may succeed later. */
  get transient(): boolean {
    return this.status >= 500;
  }
}

/** How to reach Discord's REST API. */
export interface DiscordRestClientOptions {
  token: string;
  /** DISCORD_API_BASE, e.g. https://discord.com/api (the /v10 segment is appended). */
  apiBase: string;
  apiVersion?: number;
  fetch?: typeof fetch;
  /** Per-request timeout (default 15 s). */
  timeoutMs?: number;
  now?: () => number;
}

/** The HTTP methods Discord's REST API uses. */
export type HttpMethod = "GET" | "POST" | "PATCH" | "PUT" | "DELETE";

/** Per-call options: a JSON body and a cancellation signal. */
export interface DiscordRequestOptions {
  body?: unknown;
  signal?: AbortSignal;
}

/** REST calls plus what the rate-limit headers have told us so far. */
export interface DiscordRestClient {
  /** Performs one call; resolves with the parsed JSON (undefined for 204). Never retries, never waits. */
  request<T = unknown>(method: HttpMethod, path: `/${string}`, options?: DiscordRequestOptions): Promise<T>;
  /** Even spacing (ms) of message sends/edits in this channel read from X-RateLimit-* headers, once seen. */
  messageWriteIntervalMs(channelId: string): number | undefined;
}

const USER_AGENT = "DiscordBot (https://github.com/local-llm-chatbot, 0.1.0)";

/** Flattens Discord's nested `errors` object into "field: message" lines. */
function describeErrors(errors: unknown, prefix = ""): string[] {
  if (!errors || typeof errors !== "object") return [];
  const out: string[] = [];
  for (const [key, value] of Object.entries(errors as Record<string, unknown>)) {
    if (key === "_errors" && Array.isArray(value)) {
      for (const e of value) out.push(`${prefix || "body"}: ${(e as { message?: string }).message ?? "invalid"}`);
    } else {
      out.push(...describeErrors(value, prefix ? `${prefix}.${key}` : key));
    }
  }
  return out;
}

/** Creates the client; `fetch` and the clock are injectable for tests. */
export function createDiscordRestClient(options: DiscordRestClientOptions): DiscordRestClient {
  const fetchImpl = options.fetch ?? fetch;
  const now = options.now ?? Date.now;
  const base = `${options.apiBase.replace(/\/+$/, "")}/v${options.apiVersion ?? 10}`;
  const timeoutMs = options.timeoutMs ?? 15_000;
  const limits: RateLimitTracker = createRateLimitTracker(now);

  return {
    async request<T>(method: HttpMethod, path: `/${string}`, { body, signal }: DiscordRequestOptions = {}): Promise<T> {
      const wait = limits.waitMs(method, path);
      // The bucket is known to be empty: sending would only earn a 429 (and count towards a Cloudflare ban).
      if (wait > 0) throw new RateLimitedError(Math.ceil(wait));
      const headers: Record<string, string> = { authorization: `Bot ${options.token}`, "user-agent": USER_AGENT };
      if (body !== undefined) headers["content-type"] = "application/json";
      const timeout = AbortSignal.timeout(timeoutMs);
      const res = await fetchImpl(`${base}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
      const text = res.status === 204 ? "" : await res.text();
      let data: unknown;
      if (text !== "" && (res.headers.get("content-type") ?? "").includes("application/json")) {
        try {
          data = JSON.parse(text);
        } catch {
          data = undefined;
        }
      }
      if (res.status === 429) {
        const fromBody = (data as { retry_after?: unknown } | undefined)?.retry_after;
        const fromHeader = Number(res.headers.get("retry-after"));
        const retryAfterMs =
          typeof fromBody === "number" && Number.isFinite(fromBody)
            ? Math.ceil(fromBody * 1000)
            : Number.isFinite(fromHeader) && fromHeader > 0
              ? fromHeader * 1000
              : 1000;
        limits.observe(method, path, res.headers, retryAfterMs);
        const global = (data as { global?: unknown } | undefined)?.global === true;
        throw new RateLimitedError(retryAfterMs, undefined, global);
      }
      limits.observe(method, path, res.headers);
      if (res.ok) return data as T;
      const err = (data ?? {}) as { code?: unknown; message?: unknown; errors?: unknown };
      const details = describeErrors(err.errors);
      const message = [
        typeof err.message === "string" ? err.message : res.statusText || "request failed",
        ...details,
      ].join("; ");
      throw new DiscordApiError(
        res.status,
        typeof err.code === "number" ? err.code : 0,
        method,
        path,
        message,
        err.errors,
      );
    },
    messageWriteIntervalMs: (channelId) => limits.messageWriteIntervalMs(channelId),
  };
}
