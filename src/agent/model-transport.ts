/**
 * The transport under the OpenAI SDK: undici's `request()`, handed to the SDK as its `fetch`.
 *
 * Why not Node's `fetch`: a model answers one token per SSE event, each arriving on its own, and
 * `fetch` carries every one through a web `ReadableStream`. undici's `request()` (the same library
 * under `fetch`) gives the body as a Node stream instead, which the SDK's `Stream` iterates as it is
 * (any async iterable will do). Measured on loopback, 100 streams of 300 events at 40 per second:
 * 22–27 ms of CPU per stream through `fetch`, 16–19 through this; in `npm run bench` it is the
 * largest share of the worker's CPU per reply (docs/library-defaults.md).
 *
 * It serves the chat client only (createModelClient), whose requests are JSON text; the voice clients
 * upload files and keep Node's `fetch`. The SDK reads `ok`, `status`, `headers`, `url`, `body`, `text()`
 * and `json()` of a response; that is what this gives. Redirects are not followed (undici's default).
 */
import { request } from "undici";

type FetchInput = Parameters<typeof fetch>[0];

/** A `fetch` for the OpenAI SDK over undici's `request()`. */
export async function modelFetch(input: FetchInput, init: RequestInit = {}): Promise<Response> {
  const url = input instanceof Request ? input.url : String(input);
  const answer = await request(url, {
    method: (init.method ?? "GET") as "GET",
    headers: Object.fromEntries(new Headers(init.headers)),
    body: init.body as string | undefined,
    ...(init.signal ? { signal: init.signal } : {}),
  });
  const headers = new Headers();
  for (const [name, value] of Object.entries(answer.headers)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const one of value) headers.append(name, one);
    else headers.set(name, value);
  }
  const { statusCode: status, body } = answer;
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
