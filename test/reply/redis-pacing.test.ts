/**
 * The shared pacing against a real Redis. Two gate instances on two connections stand for two
 * worker processes; a grant is the moment `acquire` resolved. Intervals and budgets are small so
 * each case runs in a second or two; nothing here sleeps to wait, every wait is the gate's own.
 */
import { setMaxListeners } from "node:events";
import { Redis } from "ioredis";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { RequestKind } from "../../src/reply/rate-gate.js";
import { budgetTiming, createRedisPacing, type RedisPacingOptions } from "../../src/reply/redis-pacing.js";
import { busiestWindow } from "../support/busiest-window.js";
import { createTestRedis, type TestRedis } from "../support/redis.js";

let testRedis: TestRedis | undefined;
const connections: Redis[] = [];

afterEach(async () => {
  for (const c of connections.splice(0)) c.disconnect();
  await testRedis?.cleanup();
  testRedis = undefined;
});

interface Grant {
  chatKey: string;
  kind: RequestKind;
  at: number;
}

/** Two "processes": each its own connection and gate, one shared prefix and grant log. */
function twoProcesses(options: Partial<RedisPacingOptions> & Pick<RedisPacingOptions, "intervalFor">) {
  testRedis = createTestRedis("pace");
  const grants: Grant[] = [];
  const make = () => {
    const redis = new Redis(testRedis!.url, { maxRetriesPerRequest: null });
    connections.push(redis);
    // Grant times are Redis's (what the pacing is about), not when this busy process got round to noting them.
    const onGrant = (g: { chatKey: string; final: boolean; at: number }) =>
      grants.push({ chatKey: g.chatKey, kind: g.final ? "final" : "intermediate", at: g.at });
    const gate = createRedisPacing({ redis, prefix: testRedis!.prefix, onGrant, ...options });
    const acquire = (chatKey: string, kind: RequestKind, signal?: AbortSignal) => gate.acquire(chatKey, kind, signal);
    return { redis, gate, acquire };
  };
  return { a: make(), b: make(), grants };
}

/** Counts the scripts a connection runs (ioredis sends defined commands as EVALSHA, or EVAL after NOSCRIPT). */
function scriptCalls(redis: Redis): () => number {
  let count = 0;
  const send = redis.sendCommand.bind(redis);
  vi.spyOn(redis, "sendCommand").mockImplementation((command, stream) => {
    if (/^eval/i.test(command.name)) count++;
    return send(command, stream);
  });
  return () => count;
}

const gaps = (times: number[]) => {
  const sorted = [...times].sort((x, y) => x - y);
  return sorted.slice(1).map((t, i) => t - sorted[i]!);
};

describe("budgetTiming", () => {
  it("keeps any window under the budget: floor(W / T) + burst ≤ perSecond, intermediates leaving the reserve", () => {
    const t = budgetTiming(30, 1250, 2);
    expect(Math.floor(1250 / t.T) + 3).toBeLessThanOrEqual(30);
    expect(t.finalToleranceMs).toBeCloseTo(2 * t.T);
    expect(t.intermediateToleranceMs).toBe(0);
  });
});

describe("createRedisPacing: one chat, two processes", () => {
  it("never grants two slots in one chat closer than the interval, whichever process asks", async () => {
    const { a, b, grants } = twoProcesses({ intervalFor: () => 60 });
    const asks: Promise<void>[] = [];
    for (let i = 0; i < 8; i++) {
      asks.push(a.acquire("telegram:-100", i % 4 === 3 ? "final" : "intermediate"));
      asks.push(b.acquire("telegram:-100", i % 4 === 1 ? "final" : "intermediate"));
    }
    await Promise.all(asks);
    expect(grants).toHaveLength(16);
    expect(Math.min(...gaps(grants.map((g) => g.at)))).toBeGreaterThanOrEqual(60);
    // Paced, not serialised behind something slower: 15 gaps of 60 ms plus timer slack.
    const times = grants.map((g) => g.at);
    expect(Math.max(...times) - Math.min(...times)).toBeLessThan(15 * 60 + 800);
  });

  it("a 429 seen by one process blocks the chat for the other until retry_after, and no other chat", async () => {
    const { a, b, grants } = twoProcesses({ intervalFor: () => 10 });
    await a.acquire("telegram:0", "final");
    const before = grants[0]!.at;
    a.gate.backoff("telegram:5", 400);
    // The block reaches Redis with the next command on that connection; ask after it from the other process.
    await expect.poll(() => testRedis!.redis.hget(`${testRedis!.prefix}:pace:c:telegram:5`, "tat")).not.toBeNull();
    await b.acquire("telegram:6", "final");
    await b.acquire("telegram:5", "final");
    const at = (chat: string) => grants.find((g) => g.chatKey === chat)!.at;
    expect(at("telegram:6")).toBeLessThan(before + 400);
    expect(at("telegram:5")).toBeGreaterThanOrEqual(before + 400);
  });

  it("a global 429 blocks every chat of the platform, not another platform", async () => {
    const budgets = { telegram: { key: "telegram", perSecond: 30 }, discord: { key: "discord", perSecond: 50 } };
    const { a, b, grants } = twoProcesses({
      intervalFor: () => 10,
      globalFor: (key) => (key.startsWith("discord") ? budgets.discord : budgets.telegram),
    });
    await a.acquire("discord:0", "final");
    const before = grants[0]!.at;
    a.gate.backoff("discord:1", 400, true);
    await expect.poll(() => testRedis!.redis.hget(`${testRedis!.prefix}:pace:g:discord`, "tat")).not.toBeNull();
    await b.acquire("telegram:2", "intermediate");
    await b.acquire("discord:2", "intermediate");
    const at = (chat: string) => grants.find((g) => g.chatKey === chat)!.at;
    expect(at("telegram:2")).toBeLessThan(before + 400);
    expect(at("discord:2")).toBeGreaterThanOrEqual(before + 400);
  });

  it("rejects an aborted wait with the signal's reason", async () => {
    const { a } = twoProcesses({ intervalFor: () => 5_000 });
    await a.acquire("telegram:9", "intermediate");
    const stop = new AbortController();
    const waiting = a.gate.acquire("telegram:9", "intermediate", stop.signal);
    stop.abort(new Error("stopped"));
    await expect(waiting).rejects.toThrow("stopped");
  });
});

describe("createRedisPacing: many chats, one bot-wide budget", () => {
  it("keeps every window under the budget with two processes and 30 chats, finals included", async () => {
    const perSecond = 20;
    const { a, b, grants } = twoProcesses({ intervalFor: () => 50, globalFor: () => ({ key: "telegram", perSecond }) });
    const asks: Promise<void>[] = [];
    for (let chat = 0; chat < 30; chat++)
      asks.push((chat % 2 ? a : b).acquire(`telegram:${chat}`, chat < 12 ? "intermediate" : "final"));
    await Promise.all(asks);
    expect(grants).toHaveLength(30);
    const times = grants.map((g) => g.at);
    // The margin (250 ms) is for latency: the gate keeps its own windows of 1250 ms under the budget.
    expect(busiestWindow(times, 1250)).toBeLessThanOrEqual(perSecond);
    expect(busiestWindow(times, 1000)).toBeLessThanOrEqual(perSecond);
  });

  it("serves finals at once while intermediates of many chats saturate the budget", async () => {
    const perSecond = 20;
    const { a, b, grants } = twoProcesses({ intervalFor: () => 30, globalFor: () => ({ key: "telegram", perSecond }) });
    const streaming = new AbortController();
    setMaxListeners(40, streaming.signal); // one listener per waiting streamer
    // 20 chats streaming: each asks again as soon as it got a slot, until the finals are through.
    const streamers = Array.from({ length: 20 }, async (_, chat) => {
      while (!streaming.signal.aborted)
        await (chat % 2 ? a : b).acquire(`telegram:s${chat}`, "intermediate", streaming.signal).catch(() => undefined);
    });
    // The budget is saturated once intermediates have had a second's worth of it.
    await expect.poll(() => grants.length, { timeout: 3_000 }).toBeGreaterThanOrEqual(perSecond);
    const finalIn = async (chat: number) => {
      const askedAt = Date.now();
      await (chat % 2 ? b : a).acquire(`telegram:f${chat}`, "final");
      return Date.now() - askedAt;
    };
    // One answer ends every 150 ms: fewer than the budget, more than the intermediates would leave over.
    const waits: number[] = [];
    for (let chat = 0; chat < 8; chat++) waits.push(await finalIn(chat));
    streaming.abort();
    await Promise.all(streamers);
    // A final waits at most about one emission interval (66 ms here, plus this busy process's own delays),
    // never behind the streamers' queue (20 chats asking at once: a second and more).
    expect(Math.max(...waits)).toBeLessThan(400);
    expect(
      busiestWindow(
        grants.map((g) => g.at),
        1250,
      ),
    ).toBeLessThanOrEqual(perSecond);
  });

  it("a crowded budget costs about one script call per slot, not one per waiting request and retry", async () => {
    const { a, b, grants } = twoProcesses({
      intervalFor: () => 50,
      globalFor: () => ({ key: "telegram", perSecond: 30 }),
    });
    const calls = [scriptCalls(a.redis), scriptCalls(b.redis)];
    // 40 chats at once, each an intermediate then its final: 80 slots, about 3 s of the budget.
    await Promise.all(
      Array.from({ length: 40 }, async (_, chat) => {
        const process = chat % 2 ? a : b;
        // As the reply pump does: each request is settled once sent, and the chat's pace counts from then.
        await process.acquire(`telegram:${chat}`, "intermediate");
        process.gate.settled(`telegram:${chat}`);
        await process.acquire(`telegram:${chat}`, "final");
      }),
    );
    expect(grants).toHaveLength(80);
    expect(
      busiestWindow(
        grants.map((g) => g.at),
        1000,
      ),
    ).toBeLessThanOrEqual(30);
    // Each process's line asks for its head only; a few calls more where the two processes race for a slot.
    expect(calls[0]!() + calls[1]!()).toBeLessThanOrEqual(3 * 80);
  });

  it("a request joining a line that waits out the budget does not wake it for a call the budget would refuse", async () => {
    // 5/s with a reserve of 2: T = 625 ms, so after one grant the next intermediate has most of a second to wait.
    const { a, grants } = twoProcesses({
      intervalFor: () => 50,
      globalFor: () => ({ key: "telegram", perSecond: 5 }),
    });
    const { T } = budgetTiming(5, 1250, 2);
    let calls = 0;
    const refusedFor: number[] = [];
    const send = a.redis.sendCommand.bind(a.redis);
    vi.spyOn(a.redis, "sendCommand").mockImplementation((command, stream) => {
      const reply = send(command, stream);
      if (/^eval/i.test(command.name)) {
        calls++;
        void Promise.resolve(reply).then(
          (answer) => Number((answer as unknown[])[0]) > 0 && refusedFor.push(Number((answer as unknown[])[0])),
          () => undefined, // NOSCRIPT: ioredis loads the script with EVAL
        );
      }
      return reply;
    });
    const first = a.acquire("telegram:0", "intermediate");
    const second = a.acquire("telegram:1", "intermediate");
    await first;
    // The line now waits out the budget for `second`; other chats join it one by one meanwhile (about 25).
    const callsAtFirst = calls;
    const leave = new AbortController();
    setMaxListeners(100, leave.signal);
    const newcomers: Promise<unknown>[] = [];
    const arrivals = setInterval(() => {
      const chat = `telegram:new${newcomers.length}`;
      newcomers.push(a.acquire(chat, "intermediate", leave.signal).catch(() => undefined));
    }, 25);
    await second;
    clearInterval(arrivals);
    const callsForSecond = calls - callsAtFirst;
    leave.abort();
    await Promise.all(newcomers);
    expect(grants.map((g) => g.chatKey)).toEqual(["telegram:0", "telegram:1"]);
    // The grant, and at most one re-ask where this process's timers or Redis ran a moment late. Before, a refused
    // call followed the first grant and each newcomer woke the line for another.
    expect(callsForSecond).toBeLessThanOrEqual(2);
    // No call was one the budget refused for most of a slot: the line asked no earlier than timing noise.
    expect(refusedFor.filter((ms) => ms >= T / 2)).toEqual([]);
  });

  it("an intermediate whose wait for the budget is cut short leaves the chat free for the final at once", async () => {
    // T = 1250 ms: one final elsewhere puts the budget a slot ahead, where intermediates must wait and finals need not.
    const { a, grants } = twoProcesses({
      intervalFor: () => 3_000,
      globalFor: () => ({ key: "telegram", perSecond: 4 }),
    });
    await a.acquire("telegram:other", "final");
    const upgrade = new AbortController();
    const intermediate = a.acquire("telegram:x", "intermediate", upgrade.signal);
    // Commands on one connection answer in order: after the second ping the script has told the intermediate to wait.
    await a.redis.ping();
    await a.redis.ping();
    upgrade.abort(new Error("the final came"));
    await expect(intermediate).rejects.toThrow("the final came");
    await a.acquire("telegram:x", "final");
    const [first, final] = grants.map((g) => g.at);
    // Not the chat's 3 s from a slot that was never used, nor behind the budget's intermediates.
    expect(final! - first!).toBeLessThan(1_000);
  });

  it("a slot granted while its intermediate was being cut short goes to the chat's final, not to waste", async () => {
    const { a, grants } = twoProcesses({
      intervalFor: () => 3_000,
      globalFor: () => ({ key: "telegram", perSecond: 30 }),
    });
    const upgrade = new AbortController();
    // The final comes while the script is deciding the intermediate's slot: the abort lands between the
    // question and its answer, and the answer is a grant (the budget and the chat are free).
    const send = a.redis.sendCommand.bind(a.redis);
    vi.spyOn(a.redis, "sendCommand").mockImplementation((command, stream) => {
      const sent = send(command, stream);
      if (/^eval/i.test(command.name) && !upgrade.signal.aborted) upgrade.abort(new Error("the final came"));
      return sent;
    });
    await expect(a.acquire("telegram:x", "intermediate", upgrade.signal)).rejects.toThrow("the final came");
    await expect.poll(() => grants.length).toBe(1);
    const askedAt = Date.now();
    await a.acquire("telegram:x", "final");
    // The chat's cell says 3 s from that grant; the final takes the grant itself instead of waiting them out.
    expect(Date.now() - askedAt).toBeLessThan(1_000);
    expect(grants).toHaveLength(1);
  });

  it("keeps its state in two hashes of one field each, which expire once they hold nothing back", async () => {
    const { a } = twoProcesses({ intervalFor: () => 10_000, globalFor: () => ({ key: "telegram", perSecond: 1 }) });
    await a.acquire("telegram:1", "final");
    const { redis, prefix } = testRedis!;
    const keys = (await redis.keys(`${prefix}:*`)).sort();
    expect(keys).toEqual([`${prefix}:pace:c:telegram:1`, `${prefix}:pace:g:telegram`]);
    for (const key of keys) {
      expect(Object.keys(await redis.hgetall(key))).toEqual(["tat"]);
      expect(await redis.pttl(key)).toBeGreaterThan(0);
      expect(await redis.pttl(key)).toBeLessThanOrEqual(10_000);
    }
  });

  it("paces local-only keys (drafts) in the process alone: no Redis command per request", async () => {
    const { a } = twoProcesses({ intervalFor: () => 40, localOnly: (key) => key.endsWith(":draft") });
    const calls = scriptCalls(a.redis);
    const started = Date.now();
    for (let i = 0; i < 4; i++) {
      await a.gate.acquire("telegram:1:draft", "intermediate");
      a.gate.settled("telegram:1:draft");
    }
    expect(Date.now() - started).toBeGreaterThanOrEqual(3 * 40 - 2);
    expect(calls()).toBe(0);
    expect(await testRedis!.redis.keys(`${testRedis!.prefix}:*`)).toEqual([]);
  });
});

describe("createRedisPacing: Redis unreachable", () => {
  it("fails open to in-process pacing and logs it once", async () => {
    const warn = vi.fn();
    const redis = new Redis("redis://127.0.0.1:1", {
      lazyConnect: true,
      maxRetriesPerRequest: null,
      retryStrategy: () => 50,
    });
    redis.on("error", () => undefined);
    connections.push(redis);
    const gate = createRedisPacing({
      redis,
      prefix: "test-pace-down",
      intervalFor: () => 200,
      commandTimeoutMs: 300,
      logger: { warn, info: vi.fn() },
    });
    // The first request waits for Redis as long as the timeout allows, then goes ahead.
    await gate.acquire("tg:1", "intermediate");
    gate.settled("tg:1");
    const settledAt = Date.now();
    // From then on no request waits on Redis, and each chat still keeps its own pace.
    await gate.acquire("tg:2", "intermediate");
    expect(Date.now() - settledAt).toBeLessThan(250);
    await gate.acquire("tg:1", "final");
    expect(Date.now() - settledAt).toBeGreaterThanOrEqual(195);
    expect(Date.now() - settledAt).toBeLessThan(450);
    gate.backoff("tg:2", 100);
    expect(warn).toHaveBeenCalledTimes(1);
  });
});
