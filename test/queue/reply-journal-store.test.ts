import { Redis } from "ioredis";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createReplyJournalStore } from "../../src/queue/reply-journal-store.js";
import { createTestRedis, type TestRedis } from "../support/redis.js";

let t: TestRedis;
beforeEach(() => {
  t = createTestRedis("journal");
});
afterEach(async () => {
  await t.cleanup();
});

describe("reply journal store", () => {
  it("gives a retry the message ids an earlier attempt recorded, from another connection", async () => {
    const store = createReplyJournalStore({ redis: t.redis, prefix: t.prefix, ttlSeconds: 120 });
    const fresh = await store.load("telegram-1-2");
    expect(fresh.messageIds).toEqual([]);
    await fresh.record(["100"]);
    expect(fresh.messageIds).toEqual(["100"]);
    await fresh.record(["100", "101"]);

    const other = new Redis(t.url);
    try {
      const retry = await createReplyJournalStore({ redis: other, prefix: t.prefix }).load("telegram-1-2");
      expect(retry.messageIds).toEqual(["100", "101"]);
    } finally {
      other.disconnect();
    }
    const ttl = await t.redis.ttl(`${t.prefix}:journal:telegram-1-2`);
    expect(ttl).toBeGreaterThan(100);
    expect(ttl).toBeLessThanOrEqual(120);
  });

  it("opens a job's journal in one command: its ids, whether it is final, and the attempts that failed", async () => {
    const redis = new Redis(t.url);
    try {
      const store = createReplyJournalStore({ redis, prefix: t.prefix, ttlSeconds: 120 });
      expect(await store.open("job-3")).toMatchObject({ final: false, failures: 0, journal: { messageIds: [] } });
      const first = await store.open("job-3");
      await first.journal.record(["200"]);
      await store.recordFailure("job-3", 1);
      await store.recordFailure("job-3", 2);
      const sent = vi.spyOn(redis, "sendCommand");
      const retry = await store.open("job-3");
      expect(sent).toHaveBeenCalledTimes(1);
      expect(retry).toMatchObject({ final: false, failures: 2, journal: { messageIds: ["200"] } });
      await retry.journal.record(["200", "201"]);
      await store.markFinal("job-3");
      expect(await store.open("job-3")).toMatchObject({
        final: true,
        failures: 2,
        journal: { messageIds: ["200", "201"] },
      });
      expect(await store.open("job-4")).toMatchObject({ final: false, failures: 0 });
    } finally {
      redis.disconnect();
    }
  });

  it("reads the runner record kept in the journal with it, and writes a plain HSET once something gave the journal its lifetime", async () => {
    const redis = new Redis(t.url);
    try {
      const store = createReplyJournalStore({ redis, prefix: t.prefix, ttlSeconds: 120 });
      const key = `${t.prefix}:journal:job-6`;
      expect((await store.open("job-6")).runner).toEqual({ id: null, proc: null });
      // What the runner's claim does: its record in the journal's hash, and the journal's lifetime.
      await t.redis.hset(key, "id", "run-1", "proc", "beat-1");
      await t.redis.expire(key, 120);
      store.lives("job-6");
      const opened = await store.open("job-6");
      expect(opened.runner).toEqual({ id: "run-1", proc: "beat-1" });
      const sent = vi.spyOn(redis, "sendCommand");
      await opened.journal.record(["300"]);
      expect(sent.mock.calls.map(([command]) => (command as { name: string }).name)).toEqual(["hset"]);
      expect(await t.redis.hget(key, "ids")).toBe('["300"]');
    } finally {
      redis.disconnect();
    }
  });

  it("gives a failure count written before any ids the journal's lifetime too", async () => {
    const store = createReplyJournalStore({ redis: t.redis, prefix: t.prefix, ttlSeconds: 120 });
    await store.recordFailure("job-5", 1);
    expect((await store.open("job-5")).failures).toBe(1);
    const ttl = await t.redis.ttl(`${t.prefix}:journal:job-5`);
    expect(ttl).toBeGreaterThan(100);
    expect(ttl).toBeLessThanOrEqual(120);
  });

  it("marks a reply final, per job", async () => {
    const store = createReplyJournalStore({ redis: t.redis, prefix: t.prefix });
    expect(await store.isFinal("a")).toBe(false);
    await store.markFinal("a");
    expect(await store.isFinal("a")).toBe(true);
    expect(await store.isFinal("b")).toBe(false);
    expect((await store.load("a")).messageIds).toEqual([]);
    // Marked final without ids recorded first: the journal still gets its lifetime.
    const ttl = await t.redis.ttl(`${t.prefix}:journal:a`);
    expect(ttl).toBeGreaterThan(0);
  });

  it("sets a journal's lifetime once per reply: the final mark after the ids is a plain HSET", async () => {
    const redis = new Redis(t.url);
    try {
      const store = createReplyJournalStore({ redis, prefix: t.prefix, ttlSeconds: 120 });
      const scripts = vi.spyOn(redis, "evalsha");
      const plain = vi.spyOn(redis, "hset");
      const journal = await store.load("job-7");
      await journal.record(["100"]);
      await journal.record(["100", "101"]);
      await store.markFinal("job-7");
      expect(scripts).toHaveBeenCalledTimes(1);
      expect(plain).toHaveBeenCalledTimes(2);
      expect(await store.isFinal("job-7")).toBe(true);
      expect((await store.load("job-7")).messageIds).toEqual(["100", "101"]);
      const ttl = await t.redis.ttl(`${t.prefix}:journal:job-7`);
      expect(ttl).toBeGreaterThan(100);
      expect(ttl).toBeLessThanOrEqual(120);
    } finally {
      redis.disconnect();
    }
  });
});
