/**
 * The fake's HTTP side: file downloads, then `/bot<token>/<method>` with parameters from the
 * query, JSON, form or multipart bodies (as grammY sends them), the token check, injected
 * failures, and every answer written as `{ ok, result }` or a Bot API error and recorded.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { InjectedFailure } from "../telegram-server.js";
import type { Dispatch } from "./method-dispatch.js";
import { ApiFailure, CLIENT_GONE } from "./method-outcomes.js";
import type { TelegramState } from "./state.js";
import { parseMultipart } from "./multipart.js";

/** The biggest body the fake reads (the real server's upload limit). */
const MAX_BODY_BYTES = 50 * 1024 * 1024;

/** The request's parameters: the query string, then the body (JSON keeps types, forms and multipart give strings). */
async function readParams(req: IncomingMessage, url: URL): Promise<Record<string, unknown>> {
  const params: Record<string, unknown> = Object.fromEntries(url.searchParams);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new Error("Request Entity Too Large");
    chunks.push(chunk as Buffer);
  }
  const body = Buffer.concat(chunks);
  if (body.length === 0) return params;
  const type = (req.headers["content-type"] ?? "").toLowerCase();
  if (type.startsWith("application/json")) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString("utf8"));
    } catch {
      throw new Error("Bad Request: can't parse JSON object");
    }
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) Object.assign(params, parsed);
    return params;
  }
  if (type.startsWith("application/x-www-form-urlencoded")) {
    Object.assign(params, Object.fromEntries(new URLSearchParams(body.toString("utf8"))));
    return params;
  }
  if (type.startsWith("multipart/form-data"))
    return Object.assign(params, parseMultipart(body, req.headers["content-type"] as string));
  return params;
}

/** The HTML page the nginx in front of the real API answers a 5xx with. */
const nginxErrorPage = (status: number): string =>
  `<html><head><title>${status} Bad Gateway</title></head><body><center><h1>${status} Bad Gateway</h1></center><hr><center>nginx/1.18.0</center></body></html>`;

/** The request handler: downloads, then the Bot API methods behind the token check and injected failures. */
export function createRequestHandler(
  state: TelegramState,
  dispatch: Dispatch,
): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const reply = (res: ServerResponse, status: number, body: unknown): void => {
    if (res.writableEnded || res.destroyed) return;
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
    state.changed();
  };

  const answer = (res: ServerResponse, method: string, params: Record<string, unknown>, outcome: unknown): void => {
    if (outcome === CLIENT_GONE) {
      state.record(method, params, 0, false, "client went away");
      return;
    }
    if (outcome instanceof ApiFailure) {
      state.record(method, params, outcome.code, false, outcome.description);
      reply(res, outcome.code, {
        ok: false,
        error_code: outcome.code,
        description: outcome.description,
        ...(outcome.parameters ? { parameters: outcome.parameters } : {}),
      });
      return;
    }
    state.record(method, params, 200, true, undefined, outcome);
    reply(res, 200, { ok: true, result: outcome });
  };

  const injectFailure = async (
    res: ServerResponse,
    req: IncomingMessage,
    method: string,
    params: Record<string, unknown>,
    failure: InjectedFailure,
  ): Promise<void> => {
    if ("retryAfter" in failure) {
      return answer(
        res,
        method,
        params,
        new ApiFailure(429, `Too Many Requests: retry after ${failure.retryAfter}`, {
          retry_after: failure.retryAfter,
        }),
      );
    }
    if ("errorCode" in failure)
      return answer(res, method, params, new ApiFailure(failure.errorCode, failure.description));
    if (failure.applied) await dispatch(method, params, res);
    if ("networkError" in failure) {
      state.record(method, params, 0, false, "connection destroyed (injected)");
      req.socket.destroy();
      return;
    }
    if (failure.html) {
      state.record(method, params, failure.status, false, "HTML error page (injected)");
      res.writeHead(failure.status, { "content-type": "text/html" });
      res.end(nginxErrorPage(failure.status));
      state.changed();
      return;
    }
    return answer(res, method, params, new ApiFailure(failure.status, "Internal Server Error"));
  };

  return async (req, res) => {
    const url = new URL(req.url ?? "/", state.apiRoot);
    if (req.method === "GET" && state.files.serveDownload(url.pathname, state.token, res)) return state.changed();
    const route = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(url.pathname);
    if (!route) return reply(res, 404, { ok: false, error_code: 404, description: "Not Found" });
    const [, token, method] = route as unknown as [string, string, string];
    let params: Record<string, unknown>;
    try {
      params = await readParams(req, url);
    } catch (err) {
      return reply(res, 400, { ok: false, error_code: 400, description: (err as Error).message });
    }
    if (token !== state.token) return answer(res, method, params, new ApiFailure(401, "Unauthorized"));

    state.arrived.push({ at: state.now(), method, params });
    const injected = state.failures.get(method.toLowerCase())?.shift() ?? state.failures.get("*")?.shift();
    if (injected) return injectFailure(res, req, method, params, injected);

    let outcome: unknown;
    try {
      outcome = await dispatch(method, params, res);
    } catch (err) {
      // A bug in the fake must show up in the test, not hang it.
      outcome = new ApiFailure(
        500,
        `Internal Server Error: fake Telegram crashed: ${(err as Error).stack ?? String(err)}`,
      );
    }
    return answer(res, method, params, outcome);
  };
}

/**
 * Listens on 127.0.0.1 with a free port. The handler is asked for per request: until the fake
 * is built around the port (its token names it), requests get a bare 503.
 */
export async function listenOnLoopback(
  handler: () => ((req: IncomingMessage, res: ServerResponse) => Promise<void>) | undefined,
): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    const handle = handler();
    if (!handle) {
      res.statusCode = 503;
      res.end();
      return;
    }
    void handle(req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  return { server, port: (server.address() as AddressInfo).port };
}
