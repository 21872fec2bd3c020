/**
 * A `fetch` over undici's `request()` for the OpenAI SDK and grammY: `fetch` carries every body through a web
 * `ReadableStream`, 22–27 ms of CPU per model stream against 16–19 here (docs/library-defaults.md). Only what
 * these clients send and read is supported. A redirect is never followed; with `redirect: "error"` (grammY's:
 * the bot's token is in the path) it fails the call as `fetch` would.
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
