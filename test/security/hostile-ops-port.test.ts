/**
 * The operator's port seen by an outsider who can reach it: /healthz says which part failed but
 * not why (error texts carry internal addresses), the admin token's length cannot be learnt from
 * the comparison, and guessing the token is slowed to a few tries a minute per address.
 */
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";

// Watches the comparison Node does (a spy only: the real function still runs).
vi.mock("node:crypto", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:crypto")>();
  return { ...actual, timingSafeEqual: vi.fn(actual.timingSafeEqual) };
});
const crypto = await import("node:crypto");
const { startOpsServer } = await import("../../src/observability/http-server.js");
const { createFailedLoginThrottle } = await import("../../src/observability/failed-login-throttle.js");
const { createMetrics } = await import("../../src/observability/metrics.js");

const TOKEN = "ops-admin-token-0123456789";
let server: Server | undefined;
afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
  vi.mocked(crypto.timingSafeEqual).mockClear();
});

async function start(extra: Partial<Parameters<typeof startOpsServer>[0]> = {}): Promise<string> {
  server = await startOpsServer({
    port: 0,
    host: "127.0.0.1",
    registry: createMetrics().registry,
    checks: [],
    admin: { token: TOKEN, handler: (_req, res) => res.end("dashboard") },
    ...extra,
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe("the ops port against an outsider", () => {
  it("/healthz names the failing part and keeps its error text (an internal address) for the log", async () => {
    const logged: { check?: string; err?: Error }[] = [];
    const base = await start({
      checks: [
        { name: "redis", check: async () => Promise.reject(new Error("connect ECONNREFUSED 10.20.30.40:6379")) },
      ],
      logger: { warn: (obj) => void logged.push(obj) },
    });
    const res = await fetch(`${base}/healthz`);
    const text = await res.text();
    expect(res.status).toBe(503);
    expect(text).not.toContain("10.20.30.40");
    expect(JSON.parse(text)).toEqual({ status: "unhealthy", checks: { redis: "unavailable" } });
    expect(logged.map((l) => [l.check, l.err?.message])).toEqual([["redis", "connect ECONNREFUSED 10.20.30.40:6379"]]);
  });

  it("a token of the wrong length is still compared in full (digests), so the length does not leak", async () => {
    const base = await start();
    expect((await fetch(`${base}/admin/queues`, { headers: { authorization: "Bearer x" } })).status).toBe(401);
    const calls = vi.mocked(crypto.timingSafeEqual).mock.calls;
    expect(calls.length).toBeGreaterThan(0);
    for (const [a, b] of calls) expect((a as Buffer).length).toBe((b as Buffer).length);
    expect((await fetch(`${base}/admin/queues`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
  });

  it("after 5 wrong tokens in a minute an address gets 429 (even with the right token) until the minute is over", async () => {
    let clock = 1_000_000;
    const base = await start({ adminThrottle: createFailedLoginThrottle({ now: () => clock }) });
    const tryToken = (token: string) =>
      fetch(`${base}/admin/queues`, { headers: { authorization: `Bearer ${token}` } });
    for (let i = 0; i < 5; i++) expect((await tryToken(`guess-${i}`)).status).toBe(401);
    const throttled = await tryToken("guess-5");
    expect(throttled.status).toBe(429);
    expect(Number(throttled.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await tryToken(TOKEN)).status).toBe(429);
    clock += 60_000;
    expect((await tryToken(TOKEN)).status).toBe(200);
  });
});
