/**
 * A `fetch` on node:http / node:https, for the clients that only carry bytes through it: the openai
 * SDK (which still builds every request and judges every answer: non-2xx → APIError from the real
 * error body), grammY's Bot API calls, the worker's Discord REST client and llama.cpp's /tokenize.
 * It skips what undici's fetch (or node-fetch, grammY's default) builds per request; measured with
 * 100 concurrent JSON calls on loopback, about 240 µs of CPU per call with undici, 120 with this
 * and a streamed Response, 85–100 with `answers: "whole"`.
 *
 * Answers come in one of two ways:
 * - "streamed" (the default): a Response whose body is pulled from the Node stream only if someone
 *   reads it (error bodies, JSON answers); a streamed answer is instead read straight off the Node
 *   stream (`nodeBodyOf`, sse-chunk-reader.ts), which skips the web streams undici and the SDK would
 *   put between the socket and each chunk;
 * - "whole": the body is read off the socket before fetch resolves, and the Response is a light one
 *   (status, headers, `text()`, `json()`, `arrayBuffer()`, no web stream), for JSON APIs whose every
 *   answer is read whole. A body cut mid-way then rejects the fetch itself with `TypeError: terminated`.
 */
import http from "node:http";
import https from "node:https";
import type { Socket } from "node:net";
import { pipeline, type Readable } from "node:stream";
import zlib from "node:zlib";

/** The response's Node body, for the Responses this transport made. */
const nodeBodies = new WeakMap<Response, Readable>();

/** The Node stream behind a Response this transport made (decoded when the server compressed it); undefined for any other Response. */
export function nodeBodyOf(response: Response): Readable | undefined {
  return nodeBodies.get(response);
}

/** Options of the transport. */
export interface HttpTransportOptions {
  /**
   * How long an idle keep-alive socket is kept. Below llama.cpp's and Node's 5 s server timeout, so
   * a request never goes out on a socket the server is closing (a server's shorter `Keep-Alive`
   * hint wins).
   */
  freeSocketTimeoutMs?: number;
  /** How answers come back (see above). Default "streamed". */
  answers?: "streamed" | "whole";
  /** What a request that names no `redirect` gets: fetch's "follow", or "error" for APIs that never redirect. */
  redirect?: RequestInit["redirect"];
}

const MAX_REDIRECTS = 20;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

interface Outgoing {
  url: URL;
  method: string;
  headers: Record<string, string>;
  body: Buffer | undefined;
}

/** Builds the transport, with its own keep-alive pools: no socket cap, many streams to one local server at once. */
export function createHttpTransport(opts: HttpTransportOptions = {}): typeof fetch {
  const timeout = opts.freeSocketTimeoutMs ?? 4_000;
  const answer = opts.answers === "whole" ? wholeResponse : streamedResponse;
  const agents = {
    "http:": new http.Agent({ keepAlive: true, maxSockets: Infinity, timeout }),
    "https:": new https.Agent({ keepAlive: true, maxSockets: Infinity, timeout }),
  };

  function send(out: Outgoing, signal: AbortSignal | null | undefined): Promise<http.IncomingMessage> {
    const protocol = out.url.protocol;
    if (protocol !== "http:" && protocol !== "https:")
      return Promise.reject(new TypeError("fetch failed", { cause: new Error(`unsupported protocol ${protocol}`) }));
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    const request = (protocol === "https:" ? https : http).request(out.url, {
      method: out.method,
      headers: out.headers,
      agent: agents[protocol],
    });
    return new Promise((resolve, reject) => {
      let response: http.IncomingMessage | undefined;
      const onAbort = (): void => {
        const reason = abortReason(signal);
        request.destroy(reason instanceof Error ? reason : undefined);
        // The body's reader must see an abort, whatever the reason was.
        response?.destroy(
          isAbortError(reason) ? (reason as Error) : new DOMException("This operation was aborted", "AbortError"),
        );
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      const forget = (): void => signal?.removeEventListener("abort", onAbort);
      // The agent's idle timeout is for free sockets only: on a busy one it would re-arm a timer per read.
      request.once("socket", (socket: Socket) => socket.setTimeout(0));
      request.once("response", (res) => {
        response = res;
        // Errors reach whoever reads the body; a body nobody reads must not crash the process with one.
        res.on("error", ignore);
        res.once("close", forget);
        resolve(res);
      });
      // `on`, not `once`: an abort may destroy a request that already failed, and its error needs a listener too.
      request.on("error", (error) => {
        forget();
        // Like fetch: an abort rejects with the signal's reason, a network failure with a TypeError.
        reject(signal?.aborted ? abortReason(signal) : new TypeError("fetch failed", { cause: error }));
      });
      request.end(out.body);
    });
  }

  return async function httpTransport(input, init = {}) {
    // The SDK passes a URL string; a whole Request object is left to the platform's fetch.
    if (input instanceof Request) return fetch(input, init);
    let out = await outgoing(new URL(input), init);
    for (let redirects = 0; ; redirects++) {
      const res = await send(out, init.signal);
      const location = res.headers.location;
      const follow = init.redirect ?? opts.redirect ?? "follow";
      if (!REDIRECT_STATUSES.has(res.statusCode ?? 0) || location === undefined || follow === "manual")
        return answer(res, out.method);
      res.destroy();
      if (follow === "error" || redirects >= MAX_REDIRECTS)
        throw new TypeError("fetch failed", { cause: new Error(`redirect to ${location} refused`) });
      out = redirected(out, res.statusCode ?? 0, new URL(location, out.url));
    }
  };
}

/** The request as node:http wants it: plain headers, the body as bytes with its length. */
async function outgoing(url: URL, init: RequestInit): Promise<Outgoing> {
  const headers = plainHeaders(init.headers);
  headers.accept ??= "*/*";
  let body: Buffer | undefined;
  const raw = init.body;
  if (typeof raw === "string") {
    body = Buffer.from(raw);
    headers["content-type"] ??= "text/plain;charset=UTF-8";
  } else if (raw instanceof ArrayBuffer) {
    body = Buffer.from(raw);
  } else if (ArrayBuffer.isView(raw)) {
    body = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  } else if (raw !== null && raw !== undefined) {
    // FormData, Blob, URLSearchParams, a stream: let the platform serialise it and name its type.
    const serialised = new Response(raw);
    const type = serialised.headers.get("content-type");
    if (type !== null) headers["content-type"] ??= type;
    body = Buffer.from(await serialised.arrayBuffer());
  }
  if (body !== undefined) headers["content-length"] = String(body.length);
  return { url, method: (init.method ?? "GET").toUpperCase(), headers, body };
}

/**
 * The request's headers with lower-case names. A plain object (what grammY and our own clients pass)
 * is copied as Headers would take it (values trimmed, names that differ only in case joined with ", ")
 * without building one; anything else goes through Headers.
 */
function plainHeaders(init: RequestInit["headers"]): Record<string, string> {
  const headers: Record<string, string> = Object.create(null) as Record<string, string>;
  // Arrays, Headers and other classes have prototypes of their own.
  if (init !== null && typeof init === "object" && Object.getPrototypeOf(init) === Object.prototype) {
    for (const [name, raw] of Object.entries(init as Record<string, string>)) {
      const key = name.toLowerCase();
      const value = String(raw).trim();
      headers[key] = Object.hasOwn(headers, key) ? `${headers[key]}, ${value}` : value;
    }
    return headers;
  }
  new Headers(init).forEach((value, name) => {
    headers[name] = value;
  });
  return headers;
}

/** The next hop of a redirect, as fetch does it: 303 (and 301/302 after POST) turn into a bodiless GET; credentials stay with their origin. */
function redirected(out: Outgoing, status: number, url: URL): Outgoing {
  const headers = { ...out.headers };
  let { method, body } = out;
  if ((status === 303 && method !== "HEAD") || ((status === 301 || status === 302) && method === "POST")) {
    method = "GET";
    body = undefined;
    for (const name of ["content-type", "content-length", "content-encoding", "content-language", "content-location"])
      delete headers[name];
  }
  if (url.origin !== out.url.origin) delete headers.authorization;
  return { url, method, headers, body };
}

/** An answer's headers as fetch gives them, from Node's raw name/value list (repeated names kept). */
function headersOf(raw: string[]): Headers {
  const headers = new Headers();
  for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i] as string, raw[i + 1] as string);
  return headers;
}

/** A web Response over the Node response; its body stream reads the socket only when pulled. */
function streamedResponse(res: http.IncomingMessage, method: string): Response {
  const headers = headersOf(res.rawHeaders);
  const status = res.statusCode ?? 0;
  const init = { status, statusText: res.statusMessage ?? "", headers };
  if (NULL_BODY_STATUSES.has(status) || method === "HEAD") {
    res.resume();
    return new Response(null, init);
  }
  const body = decoded(res, headers.get("content-encoding"));
  const response = new Response(pulledOnDemand(body), init);
  nodeBodies.set(response, body);
  return response;
}

/** The answer read whole, in a light Response. */
async function wholeResponse(res: http.IncomingMessage, method: string): Promise<Response> {
  const status = res.statusCode ?? 0;
  const coding = res.headers["content-encoding"];
  // A bodiless answer is read to its end too, so its socket is back in the pool when fetch resolves.
  const bodiless = NULL_BODY_STATUSES.has(status) || method === "HEAD";
  const bytes = await readAll(bodiless ? res : decoded(res, typeof coding === "string" ? coding : null));
  return new WholeResponse(status, res.statusMessage ?? "", res.rawHeaders, bytes) as unknown as Response;
}

/** Every byte of a body; a body that breaks rejects as fetch's body would. */
function readAll(body: Readable): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    body.on("data", (chunk: Buffer) => chunks.push(chunk));
    body.once("end", () => resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)));
    body.once("error", (error) => reject(bodyError(error)));
    // Closed without an end or an error (settled already if either came first).
    body.once("close", () => {
      // Checked first: building the error (its stack) is most of a small answer's cost.
      if (!body.readableEnded) reject(new TypeError("terminated"));
    });
  });
}

const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** What the "whole" clients read of a Response; its body can be read more than once. */
class WholeResponse {
  readonly body = null;
  readonly bodyUsed = false;
  readonly redirected = false;
  private builtHeaders: Headers | undefined;
  constructor(
    readonly status: number,
    readonly statusText: string,
    private readonly rawHeaders: string[],
    private readonly bytes: Buffer,
  ) {}

  get ok(): boolean {
    return this.status >= 200 && this.status < 300;
  }

  /** Built only when asked for (grammY never asks). */
  get headers(): Headers {
    this.builtHeaders ??= headersOf(this.rawHeaders);
    return this.builtHeaders;
  }

  async text(): Promise<string> {
    // As fetch decodes: UTF-8, a leading BOM dropped.
    const bytes = this.bytes;
    return (bytes.subarray(0, 3).equals(UTF8_BOM) ? bytes.subarray(3) : bytes).toString("utf8");
  }

  async json(): Promise<unknown> {
    return JSON.parse(await this.text()) as unknown;
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    const { buffer, byteOffset, byteLength } = this.bytes;
    return buffer.slice(byteOffset, byteOffset + byteLength) as ArrayBuffer;
  }
}

/** The body as sent before any content coding (fetch decodes too; we ask for none, some servers send it anyway). */
function decoded(res: http.IncomingMessage, coding: string | null): Readable {
  const name = coding?.trim().toLowerCase();
  const decoder =
    name === "gzip" || name === "x-gzip"
      ? zlib.createGunzip()
      : name === "deflate"
        ? zlib.createInflate()
        : name === "br"
          ? zlib.createBrotliDecompress()
          : undefined;
  if (!decoder) return res;
  // pipeline destroys both ends together: an abort or a drop reaches the reader either way.
  pipeline(res, decoder, () => {});
  return decoder;
}

/** A web stream over a Node stream that starts reading only on the first pull (highWaterMark 0). */
function pulledOnDemand(source: Readable): ReadableStream<Uint8Array> {
  let chunks: AsyncIterator<Buffer> | undefined;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        chunks ??= source[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
        try {
          const { done, value } = await chunks.next();
          if (done) controller.close();
          else controller.enqueue(new Uint8Array(value.buffer, value.byteOffset, value.byteLength));
        } catch (error) {
          controller.error(bodyError(error));
        }
      },
      cancel() {
        source.destroy();
      },
    },
    { highWaterMark: 0 },
  );
}

/** A body that broke: fetch's `TypeError: terminated`, or the abort as it came. */
export function bodyError(error: unknown): unknown {
  return isAbortError(error) ? error : new TypeError("terminated", { cause: error });
}

/** What the SDK counts as an abort (its own `isAbortError`). */
export function isAbortError(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { name?: unknown }).name === "AbortError";
}

function ignore(): void {}

function abortReason(signal: AbortSignal | null | undefined): unknown {
  const reason: unknown = signal?.reason;
  return reason ?? new DOMException("This operation was aborted", "AbortError");
}
