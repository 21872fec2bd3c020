/**
 * The runner heartbeat against the real Redis, two instances standing for two worker processes:
 * a run is seen alive while its process beats, and taken over once the process is gone or the run
 * released; however many runs a process has, it beats one counter.
 */
import { Redis } from "ioredis";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createRunnerHeartbeat, type RunnerHeartbeat } from "../../src/queue/runner-heartbeat.js";
import { createTestRedis, type TestRedis } from "../support/redis.js";

const BEAT_MS = 40;

let t: TestRedis;
const connections: Redis[] = [];
beforeEach(() => {
  t = createTestRedis("beat");
});
afterEach(async () => {
  for (const c of connections.splice(0)) c.disconnect();
  await t.cleanup();
});

/** A heartbeat on its own connection, as a worker process has. */
function processHeartbeat(): { heartbeat: RunnerHeartbeat; redis: Redis } {
  const redis = new Redis(t.url, { maxRetriesPerRequest: null });
  connections.push(redis);
  return { heartbeat: createRunnerHeartbeat({ redis, prefix: t.prefix, beatMs: BEAT_MS }), redis };
}

async function keysUnder(pattern: string): Promise<string[]> {
  return (await t.redis.keys(`${t.prefix}:${pattern}`)).sort();
}

describe("runner heartbeat", () => {
  it("beats one counter per process whatever its number of runs, and others see those runs alive", async () => {
    const a = processHeartbeat();
    const b = processHeartbeat();
    const claims = await Promise.all(["j1", "j2", "j3"].map((job) => a.heartbeat.claim(job)));

    const beats = await keysUnder("beat:*");
    expect(beats).toHaveLength(1);
    expect(await keysUnder("runner:*")).toEqual([`${t.prefix}:runner:j1`, `${t.prefix}:runner:j2`, `${t.prefix}:runner:j3`]);
    const first = Number(await t.redis.get(beats[0]!));
    await new Promise((resolve) => setTimeout(resolve, BEAT_MS * 5));
    // About one INCR per beat for the three runs together, not three.
    const moved = Number(await t.redis.get(beats[0]!)) - first;
    expect(moved).toBeGreaterThanOrEqual(2);
    expect(moved).toBeLessThanOrEqual(7);

    expect(await b.heartbeat.othersAlive("j1")).toBe(true);
    // Released: the record is gone, so the job is free (and nobody else's run was ever there).
    await claims[0]!.release();
    expect(await t.redis.exists(`${t.prefix}:runner:j1`)).toBe(0);
    expect(await b.heartbeat.othersAlive("j1")).toBe(false);
    expect(await b.heartbeat.othersAlive("never-claimed")).toBe(false);
    await Promise.all(claims.slice(1).map((c) => c.release()));
  });

  it("takes over the runs of a process that stopped beating (killed), not before", async () => {
    const a = processHeartbeat();
    const b = processHeartbeat();
    await a.heartbeat.claim("j1");
    expect(await b.heartbeat.othersAlive("j1")).toBe(true);
    // The process dies: its connection is gone, its record stays behind.
    a.redis.disconnect();
    expect(await t.redis.hget(`${t.prefix}:runner:j1`, "id")).not.toBeNull();
    expect(await b.heartbeat.othersAlive("j1")).toBe(false);
    // The new run is the job's runner now, and it is seen alive in turn.
    const taken = await b.heartbeat.claim("j1");
    const c = processHeartbeat();
    expect(await c.heartbeat.othersAlive("j1")).toBe(true);
    await taken.release();
  });

  it("reads a record of the previous version (a beat key per run) the way it was meant", async () => {
    const b = processHeartbeat();
    const record = `${t.prefix}:runner:old-job`;
    await t.redis.hset(record, "id", "run-1");
    await t.redis.set(`${record}:run-1`, "5");
    // Still beating: alive.
    const beating = setInterval(() => void t.redis.incr(`${record}:run-1`), BEAT_MS);
    try {
      expect(await b.heartbeat.othersAlive("old-job")).toBe(true);
    } finally {
      clearInterval(beating);
    }
    // Stopped beating: dead.
    expect(await b.heartbeat.othersAlive("old-job")).toBe(false);
  });
});
