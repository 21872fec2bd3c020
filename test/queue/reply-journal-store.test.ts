import { Redis } from "ioredis";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
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

  it("marks a reply final, per job", async () => {
    const store = createReplyJournalStore({ redis: t.redis, prefix: t.prefix });
    expect(await store.isFinal("a")).toBe(false);
    await store.markFinal("a");
    expect(await store.isFinal("a")).toBe(true);
    expect(await store.isFinal("b")).toBe(false);
    expect((await store.load("a")).messageIds).toEqual([]);
  });
});
