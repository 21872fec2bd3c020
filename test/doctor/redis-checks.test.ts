/** The doctor's Redis checks against real redis-server processes started with the settings under test. */
import { afterEach, describe, expect, it, vi } from "vitest";
import { checkRedis } from "../../src/doctor/redis-checks.js";
import { startPrivateRedis, type PrivateRedis } from "../support/private-redis.js";
import { freePort } from "../support/tcp-relay.js";

let server: PrivateRedis | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function checksWith(args: string[]) {
  server = await startPrivateRedis({ args });
  const findings = await checkRedis(server.url);
  for (const f of findings) expect(f.group).toBe("Redis");
  return new Map(findings.map((f) => [f.check, f]));
}

describe("doctor: Redis", () => {
  it("passes a Redis set up for a queue: appendonly yes, maxmemory-policy noeviction", async () => {
    const found = await checksWith(["--maxmemory-policy", "noeviction"]);
    expect([...found.values()].map((f) => [f.check, f.status])).toEqual([
      ["answers", "pass"],
      ["persistence", "pass"],
      ["eviction", "pass"],
    ]);
    expect(found.get("answers")!.detail).toMatch(
      new RegExp(`^Redis \\d+\\.\\d+\\.\\d+ answers at redis://127\\.0\\.0\\.1:${server!.port}`),
    );
  });

  it("a Redis that keeps nothing on disk fails persistence, with the flag that fixes it", async () => {
    const found = await checksWith(["--appendonly", "no", "--save", ""]);
    expect(found.get("persistence")).toMatchObject({
      status: "fail",
      detail: "Redis keeps nothing on disk: a restart loses every queued message and all history",
      fix: "start redis-server with --appendonly yes (or run CONFIG SET appendonly yes, then CONFIG REWRITE)",
    });
  });

  it("RDB snapshots alone pass, saying what a crash loses", async () => {
    const found = await checksWith(["--appendonly", "no", "--save", "900 1"]);
    expect(found.get("persistence")).toMatchObject({
      status: "pass",
      detail: 'RDB snapshots only (save "900 1"): a crash loses the writes since the last snapshot',
    });
  });

  it("an evicting Redis (allkeys-lru, a cache's default) fails, with the policy to set", async () => {
    const found = await checksWith(["--maxmemory-policy", "allkeys-lru"]);
    expect(found.get("eviction")).toMatchObject({
      status: "fail",
      detail:
        "maxmemory-policy is allkeys-lru: when memory runs short Redis deletes queue and lock keys (lost or doubled answers)",
    });
    expect(found.get("eviction")!.fix).toMatch(/^start redis-server with --maxmemory-policy noeviction/);
  });

  it("no Redis at REDIS_URL: one failure, never the password", async () => {
    const port = await freePort();
    const findings = await checkRedis(`redis://:hunter2secret@127.0.0.1:${port}`, 1000);
    expect(findings).toHaveLength(1);
    expect(findings[0]).toMatchObject({ check: "answers", status: "fail" });
    expect(findings[0]!.detail).toBe(
      `no Redis answers at redis://***@127.0.0.1:${port} (connect ECONNREFUSED 127.0.0.1:${port})`,
    );
    expect(findings[0]!.fix).toContain("set REDIS_URL");
    expect(JSON.stringify(findings)).not.toContain("hunter2secret");
  });

  it("a password this Redis does not ask for: said in the check's line, not as a stray ioredis warning", async () => {
    server = await startPrivateRedis({ args: [] });
    const warn = vi.spyOn(console, "warn").mockImplementation(() => undefined);
    try {
      const findings = await checkRedis(`redis://:hunter2secret@127.0.0.1:${server.port}`);
      expect(warn).not.toHaveBeenCalled();
      expect(findings[0]).toMatchObject({ check: "answers", status: "pass" });
      expect(findings[0]!.detail).toMatch(/\(it asks for no password: the one in REDIS_URL is ignored\)$/);
      expect(JSON.stringify(findings)).not.toContain("hunter2secret");
    } finally {
      warn.mockRestore();
    }
  });
});
