/**
 * The worker's HTTP client for the Bot API: grammY's `client.fetch` option, on node:http(s) with one
 * keep-alive agent per API root.
 *
 * grammY's default on Node is node-fetch, which builds a Request, Headers, a PassThrough for the body
 * and a Response for every call. The worker makes one call per draft and edit, so that is per-request
 * cost on the hottest path. grammY reads nothing of the Response but `json()` (core/client.js), so this
 * gives it an answer read whole off the socket, with `ok`, `status`, `headers` and the body's `json()`, `text()`
 * and `arrayBuffer()`:
 * - the JSON body goes out in one write; a multipart body (a file upload) is piped from its stream;
 * - the caller's signal (grammY's own timeout and the reply's abort, an `abort-controller` signal)
 *   destroys the request, and the call rejects with an AbortError;
 * - a socket or protocol failure rejects as fetch does (grammY wraps it in its HttpError);
 * - a redirect is not followed (the Bot API never redirects): it rejects, naming where it pointed;
 * - a gzip or deflate body (only if a server sends one unasked: none is asked for) is inflated.
 */
import http from "node:http";
import https from "node:https";
import { Readable } from "node:stream";
import { inflateSync, gunzipSync } from "node:zlib";

/** What grammY hands its fetch (createJsonPayload / createFormDataPayload plus baseFetchConfig). */
interface BotApiInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array | AsyncIterable<Uint8Array> | Readable | null;
  signal?: { aborted: boolean; addEventListener(type: "abort", fn: () => void): void; removeEventListener(type: "abort", fn: () => void): void } | null;
}

/** Idle keep-alive sockets are closed after this (under Node's and nginx's server defaults of 5 s and more). */
const FREE_SOCKET_TIMEOUT_MS = 4_000;

function abortError(): Error {
  const error = new Error("The operation was aborted.");
  error.name = "AbortError";
  return error;
}

function inflated(body: Buffer, encoding: string | undefined): Buffer {
  if (encoding === "gzip" || encoding === "x-gzip") return gunzipSync(body);
  if (encoding === "deflate") return inflateSync(body);
  return body;
}

/** What grammY gets back: the answer's status, headers and body, read whole. */
interface BotApiResponse {
  readonly ok: boolean;
  readonly status: number;
  readonly statusText: string;
  readonly headers: Headers;
  text(): Promise<string>;
  json(): Promise<unknown>;
  arrayBuffer(): Promise<ArrayBuffer>;
}

function answered(status: number, statusText: string, raw: http.IncomingHttpHeaders, bytes: Buffer): BotApiResponse {
  let headers: Headers | undefined;
  return {
    ok: status >= 200 && status < 300,
    status,
    statusText,
    // Built only when asked for (grammY never does).
    get headers() {
      if (!headers) {
        headers = new Headers();
        for (const [name, value] of Object.entries(raw)) {
          if (typeof value === "string") headers.set(name, value);
          else if (Array.isArray(value)) for (const v of value) headers.append(name, v);
        }
      }
      return headers;
    },
    text: async () => bytes.toString("utf8"),
    json: async () => JSON.parse(bytes.toString("utf8")) as unknown,
    arrayBuffer: async () => bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer,
  };
}

/** A fetch for grammY's `client.fetch` (a `typeof fetch` by grammY's type; only what grammY uses is there). */
export function createBotApiFetch(): typeof fetch {
  const agents = new Map<string, http.Agent>();
  const agentFor = (url: URL): http.Agent => {
    let agent = agents.get(url.origin);
    if (!agent) {
      const options = { keepAlive: true, timeout: FREE_SOCKET_TIMEOUT_MS, scheduling: "lifo" as const };
      agent = url.protocol === "https:" ? new https.Agent(options) : new http.Agent(options);
      agents.set(url.origin, agent);
    }
    return agent;
  };

  const botApiFetch = (input: string | URL, init: BotApiInit = {}): Promise<Response> =>
    new Promise<Response>((resolve, reject) => {
      const url = new URL(String(input));
      if (url.protocol !== "http:" && url.protocol !== "https:") {
        reject(new TypeError(`unsupported protocol ${url.protocol}`));
        return;
      }
      const signal = init.signal ?? undefined;
      if (signal?.aborted) {
        reject(abortError());
        return;
      }
      const body = init.body ?? undefined;
      const headers: Record<string, string | number> = { ...init.headers };
      if (typeof body === "string") headers["content-length"] = Buffer.byteLength(body);
      else if (body instanceof Uint8Array) headers["content-length"] = body.byteLength;
      const send = url.protocol === "https:" ? https.request : http.request;
      let settled = false;
      const fail = (error: unknown): void => {
        if (settled) return;
        settled = true;
        signal?.removeEventListener("abort", onAbort);
        reject(error);
      };
      const onAbort = (): void => {
        fail(abortError());
        request.destroy();
      };
      const request = send(url, { method: init.method ?? "GET", headers, agent: agentFor(url) }, (response) => {
        const status = response.statusCode ?? 0;
        if (status >= 300 && status < 400 && response.headers.location) {
          response.resume();
          fail(new TypeError(`the Bot API answered ${status}, a redirect to ${response.headers.location}, which is not followed`));
          return;
        }
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("error", fail);
        response.on("aborted", () => fail(new TypeError("the Bot API connection closed mid-answer")));
        response.on("end", () => {
          if (settled) return;
          let bytes: Buffer;
          try {
            bytes = inflated(Buffer.concat(chunks), response.headers["content-encoding"]);
          } catch (error) {
            fail(error);
            return;
          }
          settled = true;
          signal?.removeEventListener("abort", onAbort);
          resolve(answered(status, response.statusMessage ?? "", response.headers, bytes) as unknown as Response);
        });
      });
      request.on("error", fail);
      signal?.addEventListener("abort", onAbort);
      if (body === undefined || typeof body === "string" || body instanceof Uint8Array) {
        request.end(body);
        return;
      }
      const stream = body instanceof Readable ? body : Readable.from(body as AsyncIterable<Uint8Array>);
      stream.on("error", (error) => {
        fail(error);
        request.destroy();
      });
      stream.pipe(request);
    });
  return botApiFetch as unknown as typeof fetch;
}
