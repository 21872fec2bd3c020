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

async function start(checks: HealthCheck[] = [], logger?: { warn(obj: object, msg?: string): void }): Promise<string> {
  server = await startOpsServer({
    ...(logger ? { logger } : {}),
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

  it("marks the dashboard's cookie Secure when the page came over HTTPS (through a proxy), not on plain HTTP", async () => {
    const base = await start();
    const cookieFor = async (headers: Record<string, string>) =>
      (await fetch(`${base}/admin/queues?token=the-admin-token`, { headers, redirect: "manual" })).headers.get(
        "set-cookie",
      );
    expect(await cookieFor({ "x-forwarded-proto": "https" })).toMatch(/^admin_token=the-admin-token;.*; Secure$/);
    expect(await cookieFor({})).not.toContain("Secure");
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

  it("an MCP server still connecting costs one log line without a stack, however often /healthz is asked", async () => {
    const lines: { fields: object; message: string | undefined }[] = [];
    let state = "connecting";
    const base = await start(
      [
        {
          name: "mcp:files",
          degraded: true,
          check: async () => {
            if (state !== "ready") throw new Error(state);
          },
        },
      ],
      { warn: (fields, message) => void lines.push({ fields, message }) },
    );
    for (let i = 0; i < 5; i++)
      expect(await (await fetch(`${base}/healthz`)).json()).toMatchObject({ status: "degraded" });
    expect(lines).toEqual([{ fields: { check: "mcp:files", reason: "connecting" }, message: "health check degraded" }]);
    expect(JSON.stringify(lines)).not.toMatch(/\bat .+:\d+:\d+/);
    // A new reason is worth a new line; healthy again and then down again is one more.
    state = "retrying: spawn ENOENT";
    await fetch(`${base}/healthz`);
    state = "ready";
    expect(((await (await fetch(`${base}/healthz`)).json()) as { status: string }).status).toBe("ok");
    state = "connecting";
    await fetch(`${base}/healthz`);
    expect(lines.map((l) => (l.fields as { reason: string }).reason)).toEqual([
      "connecting",
      "retrying: spawn ENOENT",
      "connecting",
    ]);
  });

  it("answers 404 elsewhere", async () => {
    const base = await start();
    expect((await fetch(`${base}/nothing-here`)).status).toBe(404);
  });
});
