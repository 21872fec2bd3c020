import { Redis } from "ioredis";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type CancelBus, createCancelBus } from "../../src/queue/cancel-bus.js";
import { createTestRedis, type TestRedis } from "../support/redis.js";
import { waitFor } from "./support/queue-test-kit.js";

let t: TestRedis;
let workerSide: Redis;
const buses: CancelBus[] = [];

beforeEach(() => {
  t = createTestRedis("cancel");
  workerSide = new Redis(t.url);
});
afterEach(async () => {
  for (const bus of buses.splice(0)) await bus.close();
  workerSide.disconnect();
  await t.cleanup();
});

function bus(redis: Redis, runningTtlMs?: number): CancelBus {
  const b = createCancelBus({ redis, prefix: t.prefix, runningTtlMs });
  buses.push(b);
  return b;
}

describe("cancel bus", () => {
  it("a /stop from one connection reaches the job tracked on another, and only that conversation", async () => {
    const worker = bus(workerSide);
    const gateway = bus(t.redis);
    const stopped: string[] = [];
    const a = await worker.track("tg:1", "job-a", () => stopped.push("a"));
    await worker.track("tg:2", "job-b", () => stopped.push("b"));
    const c = await worker.track("tg:3", "job-c", () => stopped.push("c"));
    expect(await gateway.stop("tg:1")).toBe(true);
    await waitFor("the stop to arrive", () => stopped.length > 0);
    // A later stop on the same channel: once it has arrived, anything the first one set off has too.
    expect(await gateway.stop("tg:3")).toBe(true);
    await waitFor("the later stop to arrive", () => stopped.includes("c"));
    expect(stopped).toEqual(["a", "c"]);
    await a.release();
    await c.release();
    expect(await gateway.stop("tg:1")).toBe(false);
    expect(await gateway.stop("tg:4")).toBe(false);
  });

  it("keeps the running marker alive while the job runs, and lets it expire when the process is gone", async () => {
    const worker = bus(workerSide, 300);
    const gateway = bus(t.redis);
    const marker = `${t.prefix}:running:dc:1`;
    const trackedAt = Date.now();
    await worker.track("dc:1", "job", () => undefined);
    // Refreshed past twice its 300 ms lifetime: it outlived the expiry it was created with.
    await waitFor(
      "the marker to be refreshed",
      async () => Number(await t.redis.call("PEXPIRETIME", marker)) > trackedAt + 600,
      3000,
    );
    expect(await t.redis.exists(marker)).toBe(1);
    // A process that dies stops refreshing (close() stops the timers without releasing).
    await worker.close();
    await waitFor("the marker to expire", async () => !(await t.redis.exists(marker)), 2000);
    expect(await gateway.stop("dc:1")).toBe(false);
  });

  it("release does not clear a marker that now belongs to another job of the conversation", async () => {
    const worker = bus(workerSide);
    const first = await worker.track("tg:9", "job-1", () => undefined);
    await t.redis.set(`${t.prefix}:running:tg:9`, "job-2");
    await first.release();
    expect(await t.redis.get(`${t.prefix}:running:tg:9`)).toBe("job-2");
  });
});
