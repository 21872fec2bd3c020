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
    expect(await keysUnder("runner:*")).toEqual([
      `${t.prefix}:runner:j1`,
      `${t.prefix}:runner:j2`,
      `${t.prefix}:runner:j3`,
    ]);
    const first = Number(await t.redis.get(beats[0]!));
    const since = performance.now();
    const moved = async (): Promise<number> => Number(await t.redis.get(beats[0]!)) - first;
    await expect.poll(moved, { timeout: 5_000, interval: BEAT_MS }).toBeGreaterThanOrEqual(3);
    // About one INCR per beat for the three runs together, not three (however long a busy machine took).
    const beatsElapsed = (performance.now() - since) / BEAT_MS;
    expect(await moved()).toBeLessThanOrEqual(beatsElapsed + 2);

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

  it("keeps the record in a hash it shares (the job's journal): gives it its lifetime, and releases by blanking the id", async () => {
    const shared = (redis: Redis) =>
      createRunnerHeartbeat({
        redis,
        prefix: t.prefix,
        beatMs: BEAT_MS,
        sharedRecord: { key: (job) => `${t.prefix}:journal:${job}`, ttlMs: 86_400_000 },
      });
    const redisA = new Redis(t.url, { maxRetriesPerRequest: null });
    const redisB = new Redis(t.url, { maxRetriesPerRequest: null });
    connections.push(redisA, redisB);
    const a = shared(redisA);
    const b = shared(redisB);
    const journal = `${t.prefix}:journal:j1`;
    await t.redis.hset(journal, "ids", '["m1"]');
    const claim = await a.claim("j1");
    // The journal now lives a whole day from the claim; no record of its own was written.
    expect(await t.redis.pttl(journal)).toBeGreaterThan(86_000_000);
    expect(await keysUnder("runner:*")).toEqual([]);
    const [id, proc] = await t.redis.hmget(journal, "id", "proc");
    expect(id).toBeTruthy();
    // Read along with the journal by the caller: the record it passes is the one watched.
    expect(await b.othersAlive("j1", { id, proc })).toBe(true);
    await claim.release();
    // The journal keeps its fields and its lifetime; the run is gone.
    expect(await t.redis.hgetall(journal)).toMatchObject({ ids: '["m1"]', id: "" });
    expect(await t.redis.pttl(journal)).toBeGreaterThan(86_000_000);
    const after = await t.redis.hmget(journal, "id", "proc");
    expect(await b.othersAlive("j1", { id: after[0], proc: after[1] })).toBe(false);
    expect(await b.othersAlive("j1")).toBe(false);
  });
});
