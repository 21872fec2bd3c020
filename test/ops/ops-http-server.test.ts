/**
 * The ops HTTP server at its edges: whatever arrives on HTTP_PORT (a request target no URL
 * parser accepts, a malformed cookie) gets an answer and never takes the process down, and
 * a health check that hangs is reported by name instead of hanging the probe.
 */
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { startOpsServer, type HealthCheck } from "../../src/observability/http-server.js";
import { createMetrics } from "../../src/observability/metrics.js";

let server: Server | undefined;

afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

async function start(checks: HealthCheck[] = []): Promise<string> {
  server = await startOpsServer({
    port: 0,
    host: "127.0.0.1",
    registry: createMetrics().registry,
    checks,
    checkTimeoutMs: 300,
    admin: { token: "the-admin-token", handler: (_req, res) => res.end("dashboard") },
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Sends raw bytes and returns the status line of the answer. */
function rawRequest(base: string, bytes: string): Promise<string> {
  const { port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), "127.0.0.1");
    let answer = "";
    socket.on("data", (d: Buffer) => {
      answer += d.toString();
      if (answer.includes("\r\n")) {
        socket.destroy();
        resolve(answer.split("\r\n")[0]!);
      }
    });
    socket.on("error", reject);
    socket.write(bytes);
  });
}

describe("ops HTTP server", () => {
  it("answers 400 to a request target that is no URL, and keeps serving", async () => {
    const base = await start();
    expect(await rawRequest(base, "GET //[ HTTP/1.1\r\nHost: x\r\n\r\n")).toBe("HTTP/1.1 400 Bad Request");
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
  });

  it("refuses a malformed admin cookie with 401, and keeps serving", async () => {
    const base = await start();
    const refused = await fetch(`${base}/admin/queues`, { headers: { cookie: "admin_token=%E0%A4%A" } });
    expect(refused.status).toBe(401);
    expect((await fetch(`${base}/admin/queues`, { headers: { authorization: "Bearer the-admin-token" } })).status).toBe(
      200,
    );
  });

  it("names a check that does not answer in time, and the one that threw", async () => {
    const base = await start([
      { name: "redis", check: () => new Promise<void>(() => undefined) },
      { name: "model", check: async () => Promise.reject(new Error("HTTP 503")) },
      { name: "disk", check: async () => undefined },
    ]);
    const started = Date.now();
    const res = await fetch(`${base}/healthz`);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(res.status).toBe(503);
    // Only the failing parts' names: their error texts may hold internal addresses (they go to the log).
    expect(await res.json()).toEqual({
      status: "unhealthy",
      checks: { redis: "unavailable", model: "unavailable", disk: "ok" },
    });
  });

  it("answers 404 elsewhere", async () => {
    const base = await start();
    expect((await fetch(`${base}/nothing-here`)).status).toBe(404);
  });
});
