/**
 * The fake's HTTP side: the CDN's attachment downloads, then REST under /api/v9 and /api/v10 with
 * what Discord checks before a handler runs (known route and method, JSON content type and body,
 * the bot token, scripted failures, rate-limit buckets) and every call recorded as it was answered.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { RecordedRequest } from "../discord-server.js";
import type { FakeGateway } from "./gateway.js";
import { type BucketRule, createRateBuckets } from "./rate-buckets.js";
import { apiError, HttpAnswer, json } from "./http-answer.js";
import type { Route } from "./rest-route.js";
import type { DiscordState } from "./state.js";
import { readMultipart, type MultipartMessage } from "./multipart.js";

const API_PREFIX = /^\/api\/v(\d+)(\/.*)$/;
const SUPPORTED_VERSIONS = new Set(["9", "10"]);

/** The whole request body. */
const readBody = async (req: IncomingMessage): Promise<Buffer> => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
};

/** Sends an answer the way Discord's edge does (JSON, or the HTML page a proxy sends on 5xx). */
const write = (res: ServerResponse, answer: HttpAnswer): void => {
  const headers: Record<string, string> = { via: "1.1 google", ...answer.headers };
  if (answer.status === 204) {
    res.writeHead(204, headers).end();
  } else if (typeof answer.body === "string") {
    res.writeHead(answer.status, { ...headers, "content-type": "text/html" }).end(answer.body);
  } else {
    res.writeHead(answer.status, { ...headers, "content-type": "application/json" }).end(JSON.stringify(answer.body));
  }
};

/** The scripted failure this request hits (used up as it is hit), or undefined. */
const scripted = (
  failures: DiscordState["failures"],
  routeName: string,
  channelId: string | undefined,
  bucket: BucketRule | undefined,
): HttpAnswer | undefined => {
  const index = failures.findIndex(
    (f) => (!f.route || f.route === routeName) && (!f.channelId || f.channelId === channelId),
  );
  if (index < 0) return undefined;
  const f = failures[index]!;
  f.left -= 1;
  if (f.left <= 0) failures.splice(index, 1);
  if (f.status === 429) {
    const retryAfterS = (f.retryAfterMs ?? 1000) / 1000;
    const headers: Record<string, string> = {
      "retry-after": String(Math.ceil(retryAfterS)),
      "x-ratelimit-scope": f.global ? "global" : "user",
    };
    if (f.global) headers["x-ratelimit-global"] = "true";
    else if (bucket) {
      // A route's 429 carries its bucket, exhausted until retry_after, as Discord's do.
      headers["x-ratelimit-bucket"] = bucket.hash;
      headers["x-ratelimit-limit"] = String(bucket.limit);
      headers["x-ratelimit-remaining"] = "0";
      headers["x-ratelimit-reset-after"] = retryAfterS.toFixed(3);
    }
    return new HttpAnswer(
      429,
      { message: "You are being rate limited.", retry_after: retryAfterS, global: f.global ?? false },
      headers,
    );
  }
  if (f.status === 500) return json(500, { message: "500: Internal Server Error", code: 0 });
  return new HttpAnswer(
    f.status,
    `<html><head><title>${f.status}</title></head><body>${f.status} Bad Gateway</body></html>`,
  );
};

/** What the transport serves besides REST. */
export interface TransportParts {
  state: DiscordState;
  routes: Route[];
  /** Answers attachment downloads; false when the URL is not one. */
  attachments: { serve(url: URL, res: ServerResponse): boolean };
}

/** The request handler: attachments, then the REST routes with Discord's checks in front. */
export function createRequestHandler({
  state,
  routes,
  attachments,
}: TransportParts): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const { now, token, requests, violations, failures, changed } = state;
  const buckets = createRateBuckets(now);
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? "/", "http://fake");
    const method = (req.method ?? "GET").toUpperCase();
    if (method === "GET" && attachments.serve(url, res)) return void changed();
    const rawBytes = await readBody(req);
    const contentType = req.headers["content-type"] ?? "";
    // A message with files: payload_json and files[n] (read here, before the checks, as it is asynchronous).
    const multipart: MultipartMessage | HttpAnswer | undefined =
      rawBytes.length > 0 && contentType.startsWith("multipart/form-data")
        ? await readMultipart(rawBytes, contentType, state.uploadLimitBytes)
        : undefined;
    const raw = multipart ? "" : rawBytes.toString("utf8");
    const match = API_PREFIX.exec(url.pathname);
    const record: RecordedRequest = {
      at: now(),
      method,
      path: match?.[2] ?? url.pathname,
      route: `${method} ${url.pathname}`,
      apiVersion: match?.[1] ?? "",
      query: url.search,
      status: 0,
      body: undefined,
    };
    const answer = ((): HttpAnswer => {
      if (!match || !SUPPORTED_VERSIONS.has(match[1]!)) return apiError(404, 0, "404: Not Found");
      const path = match[2]!;
      const route = routes.find((r) => r.method === method && r.pattern.test(path));
      if (!route) {
        const known = routes.some((r) => r.pattern.test(path));
        return known ? apiError(405, 0, "405: Method Not Allowed") : apiError(404, 0, "404: Not Found");
      }
      const params = route.pattern.exec(path)!.slice(1);
      record.route = route.route;
      if (route.route.includes("/channels/:id")) record.channelId = params[0];
      if (route.route.includes("/messages/:id")) record.messageId = params[1];
      if (multipart instanceof HttpAnswer) return multipart;
      if (multipart) {
        record.body = multipart.body;
        record.files = multipart.files.map(({ bytes, ...f }) => ({ ...f, size: bytes.length }));
        if ("allowed_mentions" in multipart.body) record.allowedMentions = multipart.body.allowed_mentions;
        if ("message_reference" in multipart.body) record.messageReference = multipart.body.message_reference;
      } else if (raw !== "") {
        if (!(req.headers["content-type"] ?? "").includes("application/json")) {
          return apiError(400, 50035, "Invalid Form Body", {
            _errors: [{ code: "CONTENT_TYPE_INVALID", message: "Expected application/json" }],
          });
        }
        try {
          record.body = JSON.parse(raw) as Record<string, any>;
        } catch {
          return apiError(400, 50109, "The request body contains invalid JSON.");
        }
        if (record.body && typeof record.body === "object" && !Array.isArray(record.body)) {
          if ("allowed_mentions" in record.body) record.allowedMentions = record.body.allowed_mentions;
          if ("message_reference" in record.body) record.messageReference = record.body.message_reference;
        }
      }
      if (route.auth && req.headers.authorization !== `Bot ${token}`) return apiError(401, 0, "401: Unauthorized");
      const bucket = route.bucket?.(params);
      const failure = scripted(failures, route.route, record.channelId, bucket?.[0]);
      if (failure) return failure;
      let limitHeaders: Record<string, string> = {};
      if (bucket) {
        const verdict = buckets.take(bucket[0], bucket[1]);
        limitHeaders = verdict.headers;
        if (verdict.limited) {
          violations.push({
            at: now(),
            channelId: bucket[1],
            bucket: bucket[0].hash,
            route: route.route,
            retryAfterMs: Math.round(verdict.resetAfterS * 1000),
          });
          return new HttpAnswer(
            429,
            {
              message: "You are being rate limited.",
              retry_after: Number(verdict.resetAfterS.toFixed(3)),
              global: false,
            },
            { ...limitHeaders, "retry-after": String(Math.ceil(verdict.resetAfterS)), "x-ratelimit-scope": "user" },
          );
        }
      }
      const body = Array.isArray(record.body) ? undefined : (record.body as Record<string, unknown> | undefined);
      const result = route.handle({
        method,
        path,
        params,
        query: url.searchParams,
        body,
        json: record.body,
        files: multipart?.files ?? [],
      });
      return new HttpAnswer(result.status, result.body, { ...limitHeaders, ...result.headers });
    })();
    record.status = answer.status;
    requests.push(record);
    write(res, answer);
    changed();
  };

  return handle;
}

/** Listens on 127.0.0.1 with a free port; WebSocket upgrades go to the gateway. The port is in `state.port` when it resolves. */
export async function listenOnLoopback(
  state: DiscordState,
  handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
  gateway: FakeGateway,
): Promise<Server> {
  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      res
        .writeHead(500, { "content-type": "application/json" })
        .end(JSON.stringify({ message: String(error), code: 0 }));
    });
  });
  server.on("upgrade", (req, socket, head) => gateway.handleUpgrade(req, socket, head));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  state.port = (server.address() as AddressInfo).port;
  return server;
}
