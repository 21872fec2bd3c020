/** The operator's port: `/healthz`, `/metrics` (Prometheus text), and the dashboard at `/admin/queues` behind ADMIN_TOKEN. */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createHash, timingSafeEqual } from "node:crypto";
import type { Registry } from "prom-client";
import { createFailedLoginThrottle, type FailedLoginThrottle } from "./failed-login-throttle.js";
import { within } from "../shared/deadline.js";

/** One dependency's health. */
export interface HealthCheck {
  name: string;
  check(): Promise<void>;
  /** A failure only degrades the service (an MCP server is down): 200 with `"status": "degraded"`, not 503. */
  degraded?: boolean;
  /** Said instead of "unavailable" on failure: a fixed text, never an error's (which may name internal addresses). */
  detail?: string;
}

/** Options of the operator HTTP server. */
export interface OpsServerOptions {
  port: number;
  host?: string;
  registry: Registry;
  checks: HealthCheck[];
  /** Serves /admin/queues/* once the token matched; absent = 404. */
  admin?: { token: string; handler(req: IncomingMessage, res: ServerResponse): void };
  /** The web chat (WEB_CHAT=on): tried before the extra routes; returns false for paths it does not serve. */
  web?: { handle(req: IncomingMessage, res: ServerResponse): boolean };
  /** Extra routes (e.g. a Telegram webhook), tried before 404. */
  routes?: { path: string; handler(req: IncomingMessage, res: ServerResponse): void }[];
  checkTimeoutMs?: number;
  /** Where a failing check's error goes (the probe only learns which part failed). */
  logger?: { warn(obj: object, msg?: string): void };
  /** Wrong admin tokens one address may try before it is told to wait (default: 5 a minute). */
  adminThrottle?: FailedLoginThrottle;
}

/** What /healthz says of a part that failed: its error text may hold internal addresses, so it stays in the log. */
export const CHECK_FAILED = "unavailable";

/** `; Secure` for a request that came over HTTPS, directly or through a proxy that says so: the cookie then never travels in clear. */
export function secureCookie(req: IncomingMessage): string {
  const proto = String(req.headers["x-forwarded-proto"] ?? "")
    .split(",")[0]
    ?.trim()
    .toLowerCase();
  return proto === "https" || (req.socket as { encrypted?: boolean }).encrypted ? "; Secure" : "";
}

/** Compares digests of equal length, so neither the time taken nor an early exit tells the token's length. */
export function tokenMatches(given: string | undefined, expected: string): boolean {
  if (!given) return false;
  const a = createHash("sha256").update(given).digest();
  const b = createHash("sha256").update(expected).digest();
  return timingSafeEqual(a, b);
}

/** The admin token from `Authorization: Bearer`, `?token=` or the cookie; the query wins, so a stale cookie cannot lock out a fresh link. */
function adminTokenOf(req: IncomingMessage, url: URL): { token?: string; fromQuery: boolean } {
  const auth = req.headers.authorization;
  if (auth?.startsWith("Bearer ")) return { token: auth.slice(7), fromQuery: false };
  const query = url.searchParams.get("token");
  if (query) return { token: query, fromQuery: true };
  const cookie = /(?:^|;\s*)admin_token=([^;]+)/.exec(req.headers.cookie ?? "")?.[1];
  return cookie ? { token: safeDecode(cookie), fromQuery: false } : { fromQuery: false };
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/** Starts the server; resolves with it listening (port 0 picks a free one). */
export async function startOpsServer(opts: OpsServerOptions): Promise<Server> {
  const checkTimeoutMs = opts.checkTimeoutMs ?? 2000;
  // The last reason logged per degraded-only check, so a probe every few seconds does not repeat it.
  const lastDegraded = new Map<string, string>();
  const throttle = opts.adminThrottle ?? createFailedLoginThrottle();
  const server = createServer((req, res) => {
    let url: URL;
    try {
      url = new URL(req.url ?? "/", "http://localhost");
    } catch {
      // A request target no URL parser accepts must not take the process down.
      res.writeHead(400, { "content-type": "text/plain" });
      res.end("bad request\n");
      return;
    }
    if (url.pathname === "/healthz") {
      void Promise.all(
        opts.checks.map(async (c) => {
          try {
            await within(checkTimeoutMs, c.check());
            lastDegraded.delete(c.name);
            return [c.name, "ok", c.degraded === true] as const;
          } catch (error) {
            if (c.degraded) {
              // An MCP server connecting or retrying is a state, not a fault: one line when it changes.
              const reason = error instanceof Error ? error.message : String(error);
              if (lastDegraded.get(c.name) !== reason) {
                lastDegraded.set(c.name, reason);
                opts.logger?.warn({ check: c.name, reason }, "health check degraded");
              }
            } else opts.logger?.warn({ check: c.name, err: error }, "health check failed");
            return [c.name, c.detail ?? CHECK_FAILED, c.degraded === true] as const;
          }
        }),
      ).then((results) => {
        const down = results.some(([, status, degradedOnly]) => status !== "ok" && !degradedOnly);
        const degraded = results.some(([, status]) => status !== "ok");
        res.writeHead(down ? 503 : 200, { "content-type": "application/json" });
        const status = down ? "unhealthy" : degraded ? "degraded" : "ok";
        res.end(
          JSON.stringify({ status, checks: Object.fromEntries(results.map(([name, result]) => [name, result])) }),
        );
      });
      return;
    }
    if (url.pathname === "/metrics") {
      opts.registry.metrics().then(
        (text) => {
          res.writeHead(200, { "content-type": opts.registry.contentType });
          res.end(text);
        },
        (error: unknown) => {
          res.writeHead(500, { "content-type": "text/plain" });
          res.end(String((error as Error).message));
        },
      );
      return;
    }
    if (opts.admin && (url.pathname === "/admin/queues" || url.pathname.startsWith("/admin/queues/"))) {
      const { token, fromQuery } = adminTokenOf(req, url);
      const client = req.socket.remoteAddress ?? "unknown";
      const waitSeconds = throttle.blockedFor(client);
      if (waitSeconds > 0) {
        res.writeHead(429, { "content-type": "text/plain", "retry-after": String(waitSeconds) });
        res.end(`429 Too Many Requests: too many wrong admin tokens; try again in ${waitSeconds} s\n`);
        return;
      }
      if (!tokenMatches(token, opts.admin.token)) {
        throttle.failed(client);
        res.writeHead(401, { "content-type": "text/plain", "www-authenticate": 'Bearer realm="admin"' });
        res.end("401 Unauthorized: the queue dashboard needs ADMIN_TOKEN (Authorization: Bearer, or ?token=)\n");
        return;
      }
      if (fromQuery) {
        // The cookie carries the token from here on; a page load is redirected without it, so the token
        // stays out of the address bar, history and Referer.
        res.setHeader(
          "set-cookie",
          `admin_token=${encodeURIComponent(token!)}; Path=/admin/queues; HttpOnly; SameSite=Strict${secureCookie(req)}`,
        );
        if (req.method === "GET" || req.method === "HEAD") {
          url.searchParams.delete("token");
          res.writeHead(303, { location: url.pathname + url.search, "cache-control": "no-store" });
          res.end();
          return;
        }
      }
      opts.admin.handler(req, res);
      return;
    }
    if (opts.web?.handle(req, res)) return;
    const route = opts.routes?.find((r) => r.path === url.pathname);
    if (route) {
      route.handler(req, res);
      return;
    }
    res.writeHead(404, { "content-type": "text/plain" });
    res.end("not found\n");
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.host ?? "0.0.0.0", () => resolve());
  });
  return server;
}
