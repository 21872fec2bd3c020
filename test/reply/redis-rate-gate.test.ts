/**
 * The shared rate gate against a real Redis. Two gate instances on two connections stand for
 * two worker processes; grant times come from the gate's clock (Redis TIME), which is what
 * the spacing is about. Intervals are short so each case runs in a second or two.
 */
import { Redis } from "ioredis";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createRedisRateGate, type RateGrant, type RedisRateGateOptions } from "../../src/reply/redis-rate-gate.js";
import { createThrottledEditor } from "../../src/reply/throttled-editor.js";
import { createTestRedis, type TestRedis } from "../support/redis.js";
import { busiestWindow } from "../support/busiest-window.js";

let testRedis: TestRedis | undefined;
const connections: Redis[] = [];

afterEach(async () => {
  for (const c of connections.splice(0)) c.disconnect();
  await testRedis?.cleanup();
  testRedis = undefined;
});

/** Two "processes": each its own connection and gate instance, one shared prefix and grant log. */
function twoProcesses(options: Partial<RedisRateGateOptions> & Pick<RedisRateGateOptions, "intervalFor">) {
  testRedis = createTestRedis("gate");
  const grants: RateGrant[] = [];
  const make = () => {
    const redis = new Redis(testRedis!.url, { maxRetriesPerRequest: null });
    connections.push(redis);
    const evalCalls = vi.spyOn(redis, "evalsha");
    const gate = createRedisRateGate({ redis, prefix: testRedis!.prefix, onGrant: (g) => grants.push(g), ...options });
    return { redis, gate, evalCalls };
  };
  return { a: make(), b: make(), grants };
}

/** Time between consecutive grants, in order. */
function gaps(times: number[]): number[] {
  const sorted = [...times].sort((x, y) => x - y);
  return sorted.slice(1).map((t, i) => t - sorted[i]!);
}

describe("createRedisRateGate: one chat, two processes", () => {
  it("never grants two slots in one chat closer than the interval, whichever process asks", async () => {
    const { a, b, grants } = twoProcesses({ intervalFor: () => 60 });
    const asks: Promise<void>[] = [];
    for (let i = 0; i < 12; i++) {
      asks.push(a.gate.acquire("telegram:-100", i % 4 === 3 ? "final" : "intermediate"));
      asks.push(b.gate.acquire("telegram:-100", i % 4 === 1 ? "final" : "intermediate"));
    }
    await Promise.all(asks);
    expect(grants).toHaveLength(24);
    expect(grants.every((g) => g.shared)).toBe(true);
    const spacing = gaps(grants.map((g) => g.at));
    expect(Math.min(...spacing)).toBeGreaterThanOrEqual(60);
    // Paced, not serialised behind something slower: 23 gaps of 60 ms plus timer slack.
    const span = Math.max(...grants.map((g) => g.at)) - Math.min(...grants.map((g) => g.at));
    expect(span).toBeLessThan(23 * 60 + 600);
  });

  it("gives a waiting final the chat before intermediates that were waiting longer, across processes", async () => {
    const { a, b, grants } = twoProcesses({ intervalFor: () => 150 });
    await a.gate.acquire("tg:1", "intermediate"); // the chat is busy for 150 ms
    const order: string[] = [];
    const track = (label: string, p: Promise<void>) => p.then(() => order.push(label));
    const asks = [
      track("a-i1", a.gate.acquire("tg:1", "intermediate")),
      track("a-i2", a.gate.acquire("tg:1", "intermediate")),
    ];
    await new Promise((r) => setTimeout(r, 20));
    asks.push(track("b-f1", b.gate.acquire("tg:1", "final")));
    await new Promise((r) => setTimeout(r, 5));
    asks.push(track("a-f2", a.gate.acquire("tg:1", "final")));
    await Promise.all(asks);
    expect(order.slice(0, 2)).toEqual(["b-f1", "a-f2"]);
    expect(new Set(order.slice(2))).toEqual(new Set(["a-i1", "a-i2"]));
    expect(Math.min(...gaps(grants.map((g) => g.at)))).toBeGreaterThanOrEqual(150);
  });

  it("waits on a timer: an intermediate behind a busy chat costs two round trips, a free slot one", async () => {
    const { a, b } = twoProcesses({ intervalFor: () => 400 });
    await a.gate.acquire("tg:2", "intermediate");
    expect(a.evalCalls).toHaveBeenCalledTimes(1);
    const started = Date.now();
    await b.gate.acquire("tg:2", "intermediate");
    expect(Date.now() - started).toBeGreaterThanOrEqual(350);
    expect(b.evalCalls).toHaveBeenCalledTimes(2);
  });

  it("a 429 reported by one process blocks the chat for the other", async () => {
    const { a, b, grants } = twoProcesses({ intervalFor: () => 10 });
    await a.gate.acquire("tg:3", "intermediate");
    a.gate.backoff("tg:3", 600);
    await new Promise((r) => setTimeout(r, 30)); // backoff is fire-and-forget
    await b.gate.acquire("tg:3", "final");
    expect(grants[1]!.at - grants[0]!.at).toBeGreaterThanOrEqual(600);
  });

  it("rejects an aborted wait at once, and an aborted final does not hold the chat", async () => {
    const { a, b, grants } = twoProcesses({ intervalFor: () => 300 });
    await a.gate.acquire("tg:4", "intermediate");
    const controller = new AbortController();
    const final = a.gate.acquire("tg:4", "final", controller.signal);
    await new Promise((r) => setTimeout(r, 50));
    const started = Date.now();
    controller.abort(new Error("stopped"));
    await expect(final).rejects.toThrow("stopped");
    expect(Date.now() - started).toBeLessThan(50);
    await new Promise((r) => setTimeout(r, 20)); // the slot's give-back is fire-and-forget
    // The final was granted the chat's next slot (300 ms after the first request) and gave it back: the
    // intermediate gets that slot, not the one after it (600 ms).
    await b.gate.acquire("tg:4", "intermediate");
    expect(grants.map((g) => g.kind)).toEqual(["intermediate", "intermediate"]);
    expect(grants[1]!.at - grants[0]!.at).toBeGreaterThanOrEqual(300);
    expect(grants[1]!.at - grants[0]!.at).toBeLessThan(550);
  });

  it("holds the chat for a final no longer than its own slot, even when its process is gone by then", async () => {
    const { a, b, grants } = twoProcesses({ intervalFor: () => 200 });
    await a.gate.acquire("tg:5", "intermediate");
    void a.gate.acquire("tg:5", "final").catch(() => undefined);
    await new Promise((r) => setTimeout(r, 50));
    a.redis.disconnect(); // the process is gone: its final needs no further round trip
    const started = Date.now();
    await b.gate.acquire("tg:5", "intermediate");
    const waited = Date.now() - started;
    // It yielded to the final's slot (200 ms after the first request, and the interval after it), then went ahead.
    expect(waited).toBeGreaterThanOrEqual(300);
    expect(waited).toBeLessThan(600);
    // The final needed no round trip after its grant: it went out in its slot, the other process's intermediate after it.
    expect(grants.map((g) => g.kind)).toEqual(["intermediate", "final", "intermediate"]);
  });
});

describe("createRedisRateGate with the throttled editors of several answers in one chat", () => {
  it("queues an answer's final in arrival order even when its editor was waiting with an intermediate", async () => {
    const { a, b, grants } = twoProcesses({ intervalFor: () => 250 });
    const sent: string[] = [];
    const editor = (gate: typeof a.gate) =>
      createThrottledEditor<string>({
        chatKey: "telegram:-42",
        gate,
        apply: async (content) => {
          sent.push(content);
        },
      });
    await a.gate.acquire("telegram:-42", "intermediate"); // someone else's request: the chat is busy
    const answerA = editor(a.gate);
    const answerB = editor(b.gate);
    const answerC = editor(b.gate);
    answerA.update("A streaming"); // waits for a slot as an intermediate
    await new Promise((r) => setTimeout(r, 30));
    const finals = [answerB.flush("B final")];
    await new Promise((r) => setTimeout(r, 30));
    finals.push(answerA.flush("A final")); // A's answer ends: its wait becomes a final's, in line behind B only
    await new Promise((r) => setTimeout(r, 30));
    finals.push(answerC.flush("C final"));
    await Promise.all(finals);
    expect(sent).toEqual(["B final", "A final", "C final"]);
    expect(grants.map((g) => g.kind)).toEqual(["intermediate", "final", "final", "final"]);
  });

  it("lets a cancelled draft editor stop waiting at once, so the answer's final is not held behind its slot", async () => {
    const { a } = twoProcesses({ intervalFor: () => 1000 });
    const sent: string[] = [];
    await a.gate.acquire("telegram:7", "intermediate");
    const drafts = createThrottledEditor<string>({
      chatKey: "telegram:7",
      gate: a.gate,
      apply: async (c) => void sent.push(c),
    });
    drafts.update("draft");
    await new Promise((r) => setTimeout(r, 30));
    const started = Date.now();
    await drafts.cancel();
    expect(Date.now() - started).toBeLessThan(200);
    expect(sent).toEqual([]);
  });
});

describe("createRedisRateGate: many chats, one bot-wide budget", () => {
  it("keeps every window of a second under the budget, finals included and first, with two processes and 28 chats", async () => {
    const perSecond = 20;
    const { a, b, grants } = twoProcesses({ intervalFor: () => 50, globalFor: () => ({ key: "telegram", perSecond }) });
    const asks: Promise<void>[] = [];
    for (let chat = 0; chat < 28; chat++) {
      const gate = chat % 2 === 0 ? a.gate : b.gate;
      asks.push(gate.acquire(`telegram:${chat}`, chat < 12 ? "intermediate" : "final"));
    }
    await Promise.all(asks);
    expect(grants).toHaveLength(28);
    const times = grants.map((g) => g.at);
    const start = Math.min(...times);
    // The margin (250 ms) is for latency: the gate keeps its own windows of 1250 ms under the budget.
    expect(busiestWindow(times, 1250)).toBeLessThanOrEqual(perSecond);
    // The 16 finals go at the full rate (70 ms apart) ahead of the intermediates.
    const finals = grants.filter((g) => g.kind === "final").map((g) => g.at - start);
    expect(Math.max(...finals)).toBeLessThan(1400);
    // …and nothing is wasted: 16 × 70 ms, then 12 intermediates at their share (117 ms apart).
    expect(Math.max(...times) - start).toBeLessThan(3300);
  });

  it("keeps headroom for finals while intermediates of many chats saturate, and serves them first", async () => {
    const perSecond = 20;
    const { a, b, grants } = twoProcesses({ intervalFor: () => 30, globalFor: () => ({ key: "telegram", perSecond }) });
    const streaming = new AbortController();
    // 20 chats streaming: each asks again as soon as it got a slot, until the finals are through.
    const streamers = Array.from({ length: 20 }, async (_, chat) => {
      const gate = chat % 2 === 0 ? a.gate : b.gate;
      while (!streaming.signal.aborted)
        await gate.acquire(`telegram:s${chat}`, "intermediate", streaming.signal).catch(() => undefined);
    });
    await new Promise((r) => setTimeout(r, 600));
    // Ten answers end in other chats at once, then one more every 80 ms (12.5/s, more than the
    // intermediates leave over, less than the whole budget).
    const finalIn = async (chat: number) => {
      const askedAt = Date.now();
      await (chat % 2 === 0 ? b.gate : a.gate).acquire(`telegram:f${chat}`, "final");
      return Date.now() - askedAt;
    };
    const burst = await Promise.all(Array.from({ length: 10 }, (_, chat) => finalIn(chat)));
    const trickle: Promise<number>[] = [];
    for (let chat = 10; chat < 26; chat++) {
      trickle.push(finalIn(chat));
      await new Promise((r) => setTimeout(r, 80));
    }
    const trickled = await Promise.all(trickle);
    streaming.abort();
    await Promise.all(streamers);
    // Ten finals at the full rate (70 ms apart) land in well under a second despite the stream traffic,
    // and a steady trickle of finals is served at once: the intermediates yield their part of the budget.
    expect(Math.max(...burst)).toBeLessThan(900);
    expect(Math.max(...trickled)).toBeLessThan(400);
    const times = grants.map((g) => g.at);
    expect(busiestWindow(times, 1250)).toBeLessThanOrEqual(perSecond);
    // Intermediates alone never use more than their share (0.6 of the rate).
    const intermediates = grants.filter((g) => g.kind === "intermediate").map((g) => g.at);
    expect(busiestWindow(intermediates, 1250)).toBeLessThanOrEqual(Math.ceil(perSecond * 0.6) + 1);
  });

  it("spaces reserved finals that fell due together while their process stalled", async () => {
    const { a, grants } = twoProcesses({
      intervalFor: () => 50,
      globalFor: () => ({ key: "telegram", perSecond: 20 }),
    });
    const finals = Array.from({ length: 12 }, (_, chat) => a.gate.acquire(`telegram:${chat}`, "final"));
    await new Promise((r) => setTimeout(r, 40)); // every final has its reservation (70 ms apart)
    const stallUntil = Date.now() + 400;
    while (Date.now() < stallUntil); // the event loop is blocked: their timers fire late, together
    await Promise.all(finals);
    const times = grants.map((g) => g.at).sort((x, y) => x - y);
    // GCRA with a burst of 2: any three consecutive grants span at least one spacing (70 ms).
    const spans = times.slice(2).map((t, i) => t - times[i]!);
    expect(Math.min(...spans)).toBeGreaterThanOrEqual(69);
    expect(busiestWindow(times, 1250)).toBeLessThanOrEqual(20);
  });

  it("lets no chat wait on another: a chat blocked for seconds holds nobody else back", async () => {
    const { a, b, grants } = twoProcesses({
      intervalFor: (key) => (key.includes("-") ? 500 : 100),
      globalFor: () => ({ key: "telegram", perSecond: 30 }),
    });
    await a.gate.acquire("telegram:-1", "intermediate");
    a.gate.backoff("telegram:-1", 1000);
    const slow = [
      a.gate.acquire("telegram:-1", "final"),
      b.gate.acquire("telegram:-1", "final"),
      b.gate.acquire("telegram:-1", "intermediate"),
    ];
    await new Promise((r) => setTimeout(r, 50));
    const started = Date.now();
    await Promise.all([
      b.gate.acquire("telegram:7", "intermediate"),
      a.gate.acquire("telegram:8", "final"),
      b.gate.acquire("telegram:9", "final"),
    ]);
    expect(Date.now() - started).toBeLessThan(300);
    await Promise.all(slow);
    const group = grants.filter((g) => g.chatKey === "telegram:-1").map((g) => g.kind);
    expect(group).toEqual(["intermediate", "final", "final", "intermediate"]);
  });

  it("blocks the whole platform when 429s hit several chats at once (Telegram's global flood)", async () => {
    const { a, b, grants } = twoProcesses({
      intervalFor: () => 10,
      globalFor: () => ({ key: "telegram", perSecond: 30 }),
    });
    a.gate.backoff("telegram:1", 700);
    b.gate.backoff("telegram:2", 700);
    a.gate.backoff("telegram:3", 700);
    await new Promise((r) => setTimeout(r, 30));
    const started = Date.now();
    await b.gate.acquire("telegram:4", "final");
    expect(Date.now() - started).toBeGreaterThanOrEqual(600);
    // Another platform is not affected.
    const other = Date.now();
    await a.gate.acquire("discord:5", "intermediate");
    expect(Date.now() - other).toBeLessThan(100);
    expect(grants).toHaveLength(2);
  });
});

describe("createRedisRateGate: the gate's clock", () => {
  it("reads Redis's clock every few seconds instead of in every script, and paces processes whose own clocks are off", async () => {
    testRedis = createTestRedis("gate-clock");
    const interval = 100;
    const granted: { who: string; at: number }[] = [];
    const make = (who: string, skewMs: number) => {
      const redis = new Redis(testRedis!.url, { maxRetriesPerRequest: null });
      connections.push(redis);
      const evalCalls = vi.spyOn(redis, "evalsha");
      const timeCalls = vi.spyOn(redis, "time");
      const gate = createRedisRateGate({
        redis,
        prefix: testRedis!.prefix,
        intervalFor: () => interval,
        // Hosts whose clocks are seconds apart: only the readings of Redis's clock make them agree.
        processClock: () => Date.now() + skewMs,
        onGrant: () => granted.push({ who, at: Date.now() }),
      });
      return { redis, gate, evalCalls, timeCalls };
    };
    const a = make("a", 5000);
    const b = make("b", -3000);
    await Promise.all([a.redis.ping(), b.redis.ping()]);
    // The first request of each reads TIME in its script and has the process read Redis's clock (again on the next
    // request if that reading's round trip was too slow to count, as on a loaded machine).
    const nowArg = (p: typeof a): string | undefined => {
      const call = p.evalCalls.mock.calls.at(-1) as unknown as [string, number, ...string[]] | undefined;
      return call ? String(call[2 + call[1]]) : undefined;
    };
    for (const p of [a, b]) {
      for (let tries = 0; tries < 50 && !/^\d+$/.test(nowArg(p) ?? ""); tries++) {
        await p.gate.acquire("tg:clock-warm", "intermediate");
        p.gate.settled("tg:clock-warm");
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(p.timeCalls.mock.calls.length).toBeGreaterThanOrEqual(1);
    }
    a.evalCalls.mockClear();
    b.evalCalls.mockClear();
    a.timeCalls.mockClear();
    b.timeCalls.mockClear();
    const startedAt = Date.now();
    for (let i = 0; i < 10; i++) {
      const p = i % 2 === 0 ? a : b;
      await p.gate.acquire("tg:clock", i === 9 ? "final" : "intermediate");
      p.gate.settled("tg:clock");
    }
    const real = granted.slice(-10).map((g) => g.at);
    expect(granted.slice(-10).map((g) => g.who)).toEqual(["a", "b", "a", "b", "a", "b", "a", "b", "a", "b"]);
    // Spaced by the interval in real time, and not held up by the skew. Slack: each process's reading of Redis's
    // clock may run ahead by up to its round trip (at most 10 ms), and each grant is seen after its own reply's latency.
    expect(Math.min(...gaps(real))).toBeGreaterThanOrEqual(interval - 25);
    expect(Date.now() - startedAt).toBeLessThan(10 * interval + 800);
    // Every script got the time as its first argument, so none ran TIME; within 10 s no process read Redis's clock again.
    for (const p of [a, b]) {
      const calls = p.evalCalls.mock.calls as unknown as [string, number, ...string[]][];
      expect(calls.length).toBeGreaterThan(0);
      for (const [, keyCount, ...rest] of calls) expect(rest[keyCount]).toMatch(/^\d+$/);
      expect(p.timeCalls).not.toHaveBeenCalled();
    }
  });
});

describe("createRedisRateGate: Redis unreachable", () => {
  it("fails open to in-process pacing and logs it once", async () => {
    const warn = vi.fn();
    const redis = new Redis("redis://127.0.0.1:1", {
      lazyConnect: true,
      maxRetriesPerRequest: null,
      retryStrategy: () => 50,
    });
    redis.on("error", () => undefined);
    connections.push(redis);
    const grants: RateGrant[] = [];
    const gate = createRedisRateGate({
      redis,
      prefix: "test-gate-down",
      intervalFor: () => 200,
      commandTimeoutMs: 300,
      logger: { warn, info: vi.fn() },
      onGrant: (g) => grants.push(g),
    });
    const started = Date.now();
    await Promise.all([
      gate.acquire("tg:1", "intermediate"),
      gate.acquire("tg:1", "final"),
      gate.acquire("tg:2", "intermediate"),
    ]);
    expect(Date.now() - started).toBeLessThan(1500);
    expect(grants.every((g) => !g.shared)).toBe(true);
    const chat1 = grants.filter((g) => g.chatKey === "tg:1").map((g) => g.at);
    expect(chat1[1]! - chat1[0]!).toBeGreaterThanOrEqual(195);
    gate.backoff("tg:2", 100);
    expect(warn).toHaveBeenCalledTimes(1);
  });
});

describe("createRedisRateGate: the Redis work of a streamed reply", () => {
  it("asks Redis once for the next slot after this process's own request, still spaced from its completion", async () => {
    const { a, grants } = twoProcesses({ intervalFor: () => 300 });
    await a.gate.acquire("tg:8", "intermediate");
    await new Promise((r) => setTimeout(r, 100)); // the request takes 100 ms
    const doneAt = Date.now();
    a.gate.settled("tg:8");
    a.evalCalls.mockClear();
    await a.gate.acquire("tg:8", "intermediate");
    // One acquire (the settle's call went out before the count): no refusal first.
    expect(a.evalCalls).toHaveBeenCalledTimes(1);
    expect(Date.now() - doneAt).toBeGreaterThanOrEqual(295);
    expect(grants[1]!.at - grants[0]!.at).toBeGreaterThanOrEqual(395);
  });

  it("tells Redis of a prompt completion with the next request instead of a script of its own; a slow one at once", async () => {
    const interval = 300;
    const { a, b, grants } = twoProcesses({ intervalFor: () => interval });
    // A prompt request: its completion is not a round trip of its own…
    await a.gate.acquire("tg:7", "intermediate");
    a.evalCalls.mockClear();
    a.gate.settled("tg:7");
    const doneAt = Date.now();
    await new Promise((r) => setTimeout(r, 20));
    expect(a.evalCalls).not.toHaveBeenCalled();
    // …this process's next request is still spaced from it, in one round trip…
    await a.gate.acquire("tg:7", "intermediate");
    expect(a.evalCalls).toHaveBeenCalledTimes(1);
    expect(Date.now() - doneAt).toBeGreaterThanOrEqual(interval - 5);
    a.gate.settled("tg:7");
    // …and another process's is spaced from the grant it knows of.
    await b.gate.acquire("tg:7", "intermediate");
    const [first, second, third] = grants.map((g) => g.at);
    expect(second! - first!).toBeGreaterThanOrEqual(interval);
    expect(third! - second!).toBeGreaterThanOrEqual(interval - 2);

    // A slow request (100 ms, more than a tenth of the interval) frees the chat at its completion, for everyone.
    await a.gate.acquire("tg:6", "intermediate");
    await new Promise((r) => setTimeout(r, 100));
    a.evalCalls.mockClear();
    a.gate.settled("tg:6");
    const slowDoneAt = Date.now();
    await new Promise((r) => setTimeout(r, 20));
    expect(a.evalCalls).toHaveBeenCalledTimes(1);
    await b.gate.acquire("tg:6", "intermediate");
    expect(Date.now() - slowDoneAt).toBeGreaterThanOrEqual(interval - 5);
  });

  it("costs a few commands per request (no expiry round trips, one script per final) and still expires every key", async () => {
    testRedis = createTestRedis("gate-cost");
    const prefix = testRedis.prefix;
    // Connected before MONITOR starts (a connection's ready check echoed into a starting MONITOR confuses ioredis).
    const redis = new Redis(testRedis.url, { maxRetriesPerRequest: null });
    connections.push(redis);
    await redis.ping();
    const monitor = await testRedis.redis.monitor();
    connections.push(monitor as unknown as Redis);
    const seen: string[][] = [];
    // Only this test's commands (the Redis may be shared): the clock is given, so no TIME runs, and every other command names a key under the prefix.
    monitor.on("monitor", (_time: string, args: string[]) => {
      if (args.some((a) => a.startsWith(prefix))) seen.push(args);
    });
    const gate = createRedisRateGate({
      redis,
      prefix,
      now: Date.now,
      intervalFor: () => 30,
      globalFor: () => ({ key: "telegram", perSecond: 30 }),
    });
    await gate.acquire("tg:9", "intermediate"); // loads the script (NOSCRIPT, then EVAL): not counted
    gate.settled("tg:9");
    await new Promise((r) => setTimeout(r, 100));
    const before = seen.length;
    const requests = 8;
    for (let i = 0; i < requests; i++) {
      await gate.acquire("tg:9", i === requests - 1 ? "final" : "intermediate");
      gate.settled("tg:9");
      await new Promise((r) => setTimeout(r, 80)); // past the interval: each acquire is granted at once
    }
    const commands = seen.slice(before);
    // Per intermediate: EVALSHA, one MGET of the chat's and the budget's state, a SET of each; per settled:
    // EVALSHA, MGET, SET.
    expect(commands.filter((c) => /^h/i.test(c[0]!))).toEqual([]);
    expect(commands.length / requests).toBeLessThanOrEqual(7);
    expect(commands.filter((c) => c[0]!.toLowerCase() === "pttl")).toEqual([]);
    // There is no finals queue: a final is a slot like any other, granted in one round trip (for later when its
    // chat is busy), and no zset command runs at all.
    const beforeFinals = seen.length;
    await gate.acquire("tg:10", "final");
    await gate.acquire("tg:9", "intermediate");
    await gate.acquire("tg:9", "final");
    await gate.acquire("tg:9", "intermediate");
    const waiting = gate.acquire("tg:9", "final");
    await new Promise((r) => setTimeout(r, 10));
    const keys = await testRedis.redis.keys(`${prefix}*`);
    expect(keys.some((k) => k.includes(":rate:finals:"))).toBe(false);
    // Every key expires.
    for (const key of keys) expect(await testRedis.redis.pttl(key), key).toBeGreaterThan(0);
    await waiting;
    await new Promise((r) => setTimeout(r, 100)); // MONITOR's lines arrive after the reply
    const finals = seen.slice(beforeFinals);
    // One each, but the intermediate asking right behind a final: told to wait for the chat, it asks again then.
    expect(finals.filter((c) => c[0]!.toLowerCase() === "evalsha")).toHaveLength(6);
    expect(finals.filter((c) => c[0]!.toLowerCase().startsWith("z"))).toEqual([]);
    await waiting;
  });
});

describe("createRedisRateGate: lanes paced in the process at its share of the budget (drafts)", () => {
  const drafts = {
    processShareFor: (key: string) => key.endsWith(":draft"),
    globalFor: () => ({ key: "telegram-draft", perSecond: 40 }),
  };

  it("paces a chat at its interval with no round trip per request, and lets the share go when the stream ends", async () => {
    const { a, grants } = twoProcesses({ intervalFor: () => 100, ...drafts });
    for (let i = 0; i < 6; i++) {
      await a.gate.acquire("telegram:1:draft", "intermediate");
      await new Promise((r) => setTimeout(r, 5)); // the request's round trip
      a.gate.settled("telegram:1:draft");
    }
    // One share sync for six requests (the first EVALSHA answers NOSCRIPT and the script is loaded by EVAL).
    expect(a.evalCalls.mock.calls.length).toBeLessThanOrEqual(2);
    expect(grants.every((g) => g.shared)).toBe(true);
    // Spaced from each request's completion, as every lane is.
    expect(Math.min(...gaps(grants.map((g) => g.at)))).toBeGreaterThanOrEqual(100);
    const shares = `${testRedis!.prefix}:rate:s:telegram-draft`;
    expect(await testRedis!.redis.hlen(shares)).toBe(1);
    a.gate.release("telegram:1:draft");
    // Letting go: it publishes no demand, and its allowance only until its last window has passed.
    await vi.waitFor(async () => expect((await testRedis!.redis.hvals(shares))[0]).toMatch(/^0\|/));
  });

  it("keeps every window under the bot-wide budget while 30 chats of two processes stream, each chat getting its turns", async () => {
    const perSecond = 40;
    const { a, b, grants } = twoProcesses({
      intervalFor: () => 250,
      ...drafts,
      globalFor: () => ({ key: "telegram-draft", perSecond }),
    });
    const streaming = new AbortController();
    const streamers = Array.from({ length: 30 }, async (_, chat) => {
      const gate = chat % 2 === 0 ? a.gate : b.gate;
      await new Promise((r) => setTimeout(r, chat * 20)); // chats start one after another, as answers do
      while (!streaming.signal.aborted) {
        await gate.acquire(`telegram:${chat}:draft`, "intermediate", streaming.signal).catch(() => undefined);
        gate.settled(`telegram:${chat}:draft`);
      }
    });
    const trips = () => a.evalCalls.mock.calls.length + b.evalCalls.mock.calls.length;
    await new Promise((r) => setTimeout(r, 2000));
    const tripsAtTwoSeconds = trips();
    await new Promise((r) => setTimeout(r, 2000));
    const steadyTrips = trips() - tripsAtTwoSeconds;
    streaming.abort();
    await Promise.all(streamers);
    const times = grants.map((g) => g.at);
    expect(busiestWindow(times, 1250)).toBeLessThanOrEqual(perSecond);
    // The budget is used, not wasted: 39 grants a window (no burst) over 4 s is about 125; the first second
    // goes to the two processes agreeing on their shares.
    expect(grants.length).toBeGreaterThan(80);
    for (let chat = 0; chat < 30; chat++) {
      const own = grants.filter((g) => g.chatKey === `telegram:${chat}:draft`).map((g) => g.at);
      expect(own.length, `chat ${chat}`).toBeGreaterThanOrEqual(2);
      expect(Math.min(...gaps(own)), `chat ${chat}`).toBeGreaterThanOrEqual(245);
    }
    // Each process agrees its share when its demand outgrows it and, the budget being tight, twice a second: never
    // per request. Once every chat streams, that is about 4 round trips a second for the two processes.
    expect(trips()).toBeLessThan(grants.length / 3);
    expect(steadyTrips).toBeLessThanOrEqual(10);
  });

  it("splits the budget by demand, gives a newcomer what the others leave free at once, and drops a share whose process is gone", async () => {
    const { a, b, grants } = twoProcesses({ intervalFor: () => 250, ...drafts });
    const shares = `${testRedis!.prefix}:rate:s:telegram-draft`;
    // A process that died a while ago still has its entry: it is not counted, and the first sync removes it.
    await testRedis!.redis.hset(shares, "gone", `100|40|${Date.now() - 1000}`);
    await a.gate.acquire("telegram:1:draft", "intermediate");
    expect(await testRedis!.redis.hexists(shares, "gone")).toBe(0);
    // a wants one chat's worth (5 a window at 250 ms) plus headroom for two more (10): 15 of 40. b, arriving, gets
    // at once what a left free, without waiting for a to shrink.
    const started = Date.now();
    await b.gate.acquire("telegram:2:draft", "intermediate");
    expect(Date.now() - started).toBeLessThan(100);
    const published = Object.fromEntries(
      Object.entries(await testRedis!.redis.hgetall(shares)).map(([k, v]) => [k, v.split("|").map(Number)]),
    );
    expect(Object.values(published).map((f) => f[0])).toEqual([5, 5]);
    expect(Object.values(published).reduce((sum, f) => sum + f[1]!, 0)).toBeLessThanOrEqual(40);
    expect(grants.every((g) => g.shared)).toBe(true);
  });

  it("blocks a chat after its 429, and the whole lane when several chats get one at once", async () => {
    const { a } = twoProcesses({
      intervalFor: () => 50,
      ...drafts,
      globalFor: () => ({ key: "telegram-draft", perSecond: 200 }),
    });
    await a.gate.acquire("telegram:1:draft", "intermediate");
    a.gate.backoff("telegram:1:draft", 400);
    let started = Date.now();
    await a.gate.acquire("telegram:1:draft", "intermediate");
    expect(Date.now() - started).toBeGreaterThanOrEqual(395);
    await a.gate.acquire("telegram:2:draft", "intermediate");
    a.gate.backoff("telegram:1:draft", 500);
    a.gate.backoff("telegram:2:draft", 500);
    a.gate.backoff("telegram:3:draft", 500);
    started = Date.now();
    await a.gate.acquire("telegram:4:draft", "intermediate");
    expect(Date.now() - started).toBeGreaterThanOrEqual(495);
  });

  it("paces each chat at its interval in the process alone when Redis does not answer", async () => {
    const { a, grants } = twoProcesses({ intervalFor: () => 80, ...drafts, commandTimeoutMs: 200 });
    await a.gate.acquire("telegram:1:draft", "intermediate");
    a.redis.disconnect();
    await a.gate.acquire("telegram:1:draft", "intermediate");
    await a.gate.acquire("telegram:1:draft", "intermediate");
    expect(grants.map((g) => g.shared)).toEqual([true, false, false]);
    expect(Math.min(...gaps(grants.map((g) => g.at)))).toBeGreaterThanOrEqual(78);
  });
});
