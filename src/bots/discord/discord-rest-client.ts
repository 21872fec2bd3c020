/**
 * Discord REST for workers (no gateway), on @discordjs/rest. It never waits or retries: our reply editor paces
 * itself and always sends the newest text, so a known-empty bucket or a 429 becomes RateLimitedError at once,
 * with the body's exact `retry_after` rather than the rounded-up `Retry-After` header.
 */
import {
  DefaultRestOptions,
  DiscordAPIError,
  HTTPError,
  RateLimitError,
  REST,
  type RequestMethod,
  type ResponseLike,
} from "@discordjs/rest";
import { RateLimitedError } from "../../contracts/reply-port.js";
import { createRateLimitTracker } from "./discord-rate-limits.js";

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
  /** The HTTP call under REST (default REST's own): the worker meters it. */
  makeRequest?: MakeRequest;
  /** Per-request timeout, from queueing to the body read (default 15 s). */
  timeoutMs?: number;
}

/** REST's HTTP call: a URL and undici's request options in, a fetch-like response out. */
export type MakeRequest = (typeof DefaultRestOptions)["makeRequest"];

/** The HTTP methods Discord's REST API uses. */
export type HttpMethod = "GET" | "POST" | "PATCH" | "PUT" | "DELETE";

/** A file uploaded with a request. */
export interface DiscordUpload {
  name: string;
  data: Uint8Array;
  contentType?: string;
}

/** Per-call options: a JSON body, files (then multipart), and a cancellation signal. */
export interface DiscordRequestOptions {
  body?: unknown;
  files?: readonly DiscordUpload[];
  signal?: AbortSignal;
}

/** REST calls plus what the rate-limit headers have told us so far. */
export interface DiscordRestClient {
  /** Performs one call; resolves with the parsed JSON (undefined for 204). Never retries, never waits. */
  request<T = unknown>(method: HttpMethod, path: `/${string}`, options?: DiscordRequestOptions): Promise<T>;
  /** Even spacing (ms) of message sends/edits in this channel read from X-RateLimit-* headers, once seen. */
  messageWriteIntervalMs(channelId: string): number | undefined;
}

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

/** A 429's Retry-After set to the body's exact `retry_after` (seconds, fractional), which REST then reads. */
async function exactRetryAfter(res: ResponseLike): Promise<ResponseLike> {
  if (res.status !== 429) return res;
  const text = await res.text();
  const headers = new Headers(res.headers);
  try {
    const retryAfter = (JSON.parse(text) as { retry_after?: unknown }).retry_after;
    if (typeof retryAfter === "number" && Number.isFinite(retryAfter)) headers.set("retry-after", String(retryAfter));
  } catch {
    // Not JSON: the header stays as Discord sent it.
  }
  return new Response(text, { status: res.status, statusText: res.statusText, headers }) as ResponseLike;
}

/** Creates the client; the HTTP call is injectable (the worker meters it). */
export function createDiscordRestClient(options: DiscordRestClientOptions): DiscordRestClient {
  const makeRequest = options.makeRequest ?? DefaultRestOptions.makeRequest;
  const timeoutMs = options.timeoutMs ?? 15_000;
  const limits = createRateLimitTracker();
  const api = options.apiBase.replace(/\/+$/, "");
  const version = String(options.apiVersion ?? 10);
  // Headers are read here, under REST, rather than from its `response` event, which clones every response.
  const versionPath = `${new URL(api).pathname.replace(/\/+$/, "")}/v${version}`;
  const observed = (url: string, init: { method?: string | undefined }, res: ResponseLike): ResponseLike => {
    const path = new URL(url).pathname.slice(versionPath.length);
    limits.observe((init.method ?? "GET").toUpperCase(), path, res.headers);
    return res;
  };
  const rest = new REST({
    api,
    version,
    rejectOnRateLimit: () => true,
    retries: 0,
    offset: 0,
    timeout: timeoutMs,
    makeRequest: async (url, init) => exactRetryAfter(observed(url, init, await makeRequest(url, init))),
  }).setToken(options.token);

  return {
    async request<T>(
      method: HttpMethod,
      path: `/${string}`,
      { body, files, signal }: DiscordRequestOptions = {},
    ): Promise<T> {
      // One timer for the whole call (queue, headers and body): REST's own stops at the headers.
      const call = new AbortController();
      const timer = setTimeout(
        () => call.abort(new DOMException("Discord did not answer in time", "TimeoutError")),
        timeoutMs,
      );
      const stop = (): void => call.abort(signal?.reason);
      if (signal?.aborted) stop();
      else signal?.addEventListener("abort", stop, { once: true });
      const [route, query] = path.split("?", 2) as [`/${string}`, string | undefined];
      try {
        const data = await rest.request({
          fullRoute: route,
          method: method as RequestMethod,
          query: query ? new URLSearchParams(query) : undefined,
          body,
          // REST names file n `files[n]`, as Discord expects.
          files: files && [...files],
          signal: call.signal,
        });
        return (data instanceof ArrayBuffer ? undefined : data) as T;
      } catch (error) {
        throw fromRest(error, method, route);
      } finally {
        clearTimeout(timer);
        signal?.removeEventListener("abort", stop);
      }
    },
    messageWriteIntervalMs: (channelId) => limits.messageWriteIntervalMs(channelId),
  };
}

/** REST's errors as the reply port knows them; anything else (an abort, a network failure) as it is. */
function fromRest(error: unknown, method: string, path: string): unknown {
  if (error instanceof RateLimitError) {
    const ms = error.retryAfter > 0 ? error.retryAfter : error.timeToReset > 0 ? error.timeToReset : 1000;
    return new RateLimitedError(Math.ceil(ms), undefined, error.global);
  }
  if (error instanceof DiscordAPIError) {
    const raw = error.rawError as { code?: unknown; message?: unknown; errors?: unknown };
    const message = [
      typeof raw.message === "string" ? raw.message : "request failed",
      ...describeErrors(raw.errors),
    ].join("; ");
    return new DiscordApiError(
      error.status,
      typeof raw.code === "number" ? raw.code : 0,
      method,
      path,
      message,
      raw.errors,
    );
  }
  if (error instanceof HTTPError) return new DiscordApiError(error.status, 0, method, path, error.message);
  return error;
}
