/**
 * A `fetch` over undici's `request()`, for the clients whose library takes a `fetch`: the OpenAI SDK
 * (the model's stream) and grammY (the Bot API). Discord's REST already uses `request()` by default.
 *
 * Why not Node's `fetch` (or node-fetch, grammY's default): a model answers one token per SSE event and
 * a reply makes about thirty Bot API calls, each small. `fetch` carries every body through a web
 * `ReadableStream`; undici's `request()` (the library under Node's `fetch`) gives a Node stream, which
 * the SDK's `Stream` iterates as it is and grammY reads with `json()`. Measured on loopback, 100 streams
 * of 300 events at 40 per second: 22–27 ms of CPU per stream through `fetch`, 16–19 through this; in
 * `npm run bench` the model's stream is the largest share of the worker's CPU per reply
 * (docs/library-defaults.md).
 *
 * Bodies are what these clients send: text (JSON) or bytes, or a Node stream (grammY's multipart
 * upload). A response has what they read: `ok`, `status`, `headers`, `url`, `body`, `text()` and
 * `json()` (grammY only `json()`). A redirect is never followed (undici's default); with `redirect: "error"`
 * (grammY's setting, since the bot's token is in the path) it fails the call as `fetch` would.
 */
import { Readable } from "node:stream";
import { request } from "undici";

type FetchInput = Parameters<typeof fetch>[0];
type Body = string | Uint8Array | Readable | null | undefined;

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** The body as undici takes it; anything else is a caller's mistake, refused before any byte is sent. */
function bodyOf(body: unknown): Body {
  if (body == null || typeof body === "string" || body instanceof Uint8Array || body instanceof Readable) {
    return body as Body;
  }
  throw new TypeError(`undiciFetch: unsupported body (${Object.prototype.toString.call(body)})`);
}

/** `fetch` over undici's `request()`. */
export async function undiciFetch(input: FetchInput, init: RequestInit = {}): Promise<Response> {
  const url = input instanceof Request ? input.url : String(input);
  const answer = await request(url, {
    method: (init.method ?? "GET") as "GET",
    headers: Object.fromEntries(new Headers(init.headers)),
    body: bodyOf(init.body),
    ...(init.signal ? { signal: init.signal } : {}),
  });
  const { statusCode: status, body } = answer;
  if (init.redirect === "error" && REDIRECTS.has(status)) {
    await body.dump().catch(() => undefined);
    // The message leaves the URL out: a Bot API path carries the token.
    throw new TypeError(`fetch failed: the server answered with a redirect (${status}), which is refused`);
  }
  const headers = new Headers();
  for (const [name, value] of Object.entries(answer.headers)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const one of value) headers.append(name, one);
    else headers.set(name, value);
  }
  const response = {
    ok: status >= 200 && status < 300,
    status,
    headers,
    url,
    body,
    text: () => body.text(),
    json: () => body.json(),
  };
  return response as unknown as Response;
}
