/**
 * Several worker PROCESSES on one Redis (test/queue/worker-process.ts): ordering per
 * conversation and concurrency across conversations, /stop reaching another process,
 * a worker killed with SIGKILL mid-answer, and SIGTERM. Every assertion reads the
 * events the processes logged into Redis, in the order Redis received them.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createCancelBus } from "../../src/queue/cancel-bus.js";
import { jobIdFor } from "../../src/contracts/inbound-message.js";
import { createMessageQueue, type MessageQueue } from "../../src/queue/message-queue.js";
import { createTestRedis, type TestRedis } from "../support/redis.js";
import { killWorkers, message, readEvents, spawnWorker, waitFor, type WorkerEvent } from "./support/queue-test-kit.js";

let t: TestRedis;
let queue: MessageQueue;

beforeEach(() => {
  t = createTestRedis("procs");
  queue = createMessageQueue({ connection: t.redis, prefix: t.prefix });
});
afterEach(async () => {
  await killWorkers();
  await queue.close();
  await t.cleanup();
});

const of = (events: WorkerEvent[], kind: WorkerEvent["kind"], jobId?: string): WorkerEvent[] =>
  events.filter((e) => e.kind === kind && (jobId === undefined || e.jobId === jobId));

describe("worker processes", () => {
  it("two processes: each conversation strictly in order, one at a time; conversations overlap", async () => {
    const [a, b] = await Promise.all([
      spawnWorker({ url: t.url, prefix: t.prefix, concurrency: 2 }),
      spawnWorker({ url: t.url, prefix: t.prefix, concurrency: 2 }),
    ]);
    const convs = ["tg:-100", "dc:200", "tg:300"];
    const sent = new Map<string, string[]>(convs.map((c) => [c, []]));
    for (let i = 0; i < 4; i++) {
      for (const conv of convs) {
        const m = message(conv, String(i), "sleep:60");
        sent.get(conv)?.push(jobIdFor(m));
        expect((await queue.enqueue(m)).status).toBe("queued");
      }
    }
    const events = await waitFor(
      "12 answers",
      async () => {
        const all = await readEvents(t.redis, t.prefix);
        return of(all, "end").length >= 12 ? all : undefined;
      },
      15_000,
    );

    for (const conv of convs) {
      const mine = events.filter((e) => e.conv === conv && (e.kind === "start" || e.kind === "end"));
      // start(1) end(1) start(2) end(2) …: never two of one conversation at once, always in arrival order.
      expect(mine.map((e) => `${e.kind}:${e.jobId}`)).toEqual(
        (sent.get(conv) ?? []).flatMap((id) => [`start:${id}`, `end:${id}`]),
      );
    }
    // Some answer of one conversation started while another conversation's answer was running.
    let running = 0;
    let maxRunning = 0;
    for (const e of events) {
      if (e.kind === "start") maxRunning = Math.max(maxRunning, ++running);
      if (e.kind === "end") running--;
    }
    expect(maxRunning).toBeGreaterThan(1);
    const workedOn = new Set(of(events, "start").map((e) => e.pid));
    expect(workedOn).toEqual(new Set([a.pid, b.pid]));
  });

  it("/stop from another process aborts the running answer; the conversation continues", async () => {
    const worker = await spawnWorker({ url: t.url, prefix: t.prefix, concurrency: 2 });
    const bus = createCancelBus({ redis: t.redis, prefix: t.prefix });
    try {
      const m1 = message("tg:5", "1", "wait-stop");
      const m2 = message("tg:5", "2", "sleep:10");
      await queue.enqueue(m1);
      await queue.enqueue(m2);
      await waitFor(
        "the answer to start",
        async () => of(await readEvents(t.redis, t.prefix), "start", jobIdFor(m1)).length === 1,
      );
      await waitFor("the running marker", () => t.redis.exists(`${t.prefix}:running:tg:5`));
      expect(await bus.stop("tg:5")).toBe(true);
      const events = await waitFor("the next message", async () => {
        const all = await readEvents(t.redis, t.prefix);
        return of(all, "end", jobIdFor(m2)).length === 1 ? all : undefined;
      });
      expect(of(events, "aborted", jobIdFor(m1)).map((e) => [e.pid, e.cancel])).toEqual([[worker.pid, "stop"]]);
      expect(of(events, "stopped", jobIdFor(m1))).toHaveLength(1);
      expect(of(events, "start", jobIdFor(m1))).toHaveLength(1);
      expect(of(events, "giveup")).toHaveLength(0);
      await waitFor("the running marker to go", async () => !(await t.redis.exists(`${t.prefix}:running:tg:5`)));
      expect(await bus.stop("tg:5")).toBe(false);
    } finally {
      await bus.close();
    }
  });

  it("SIGKILL mid-answer: another process finishes it, reusing the recorded message id, exactly once", async () => {
    const settings = { url: t.url, prefix: t.prefix, concurrency: 1, lockDurationMs: 1000, stalledIntervalMs: 300 };
    // Both processes run from the start; whichever takes the answer is killed, the other must finish it.
    const pair = await Promise.all([spawnWorker(settings), spawnWorker(settings)]);
    const m1 = message("dc:7", "1", "hang-once:20");
    const m2 = message("dc:7", "2", "sleep:10");
    await queue.enqueue(m1);
    await queue.enqueue(m2);
    await waitFor(
      "the reply message to be recorded",
      async () => (await t.redis.hget(`${t.prefix}:journal:${jobIdFor(m1)}`, "ids")) !== null,
    );
    const takenBy = of(await readEvents(t.redis, t.prefix), "start", jobIdFor(m1))[0]?.pid;
    const doomed = pair.find((w) => w.pid === takenBy);
    const rescuer = pair.find((w) => w.pid !== takenBy);
    if (!doomed || !rescuer) throw new Error("no worker took the answer");
    doomed.child.kill("SIGKILL");
    expect(await doomed.exited).toBe("SIGKILL");

    const events = await waitFor(
      "both answers",
      async () => {
        const all = await readEvents(t.redis, t.prefix);
        return of(all, "end", jobIdFor(m2)).length === 1 ? all : undefined;
      },
      10_000,
    );
    const recorded = `msg-${doomed.pid}-${jobIdFor(m1)}`;
    expect(of(events, "start", jobIdFor(m1)).map((e) => [e.pid, e.messageIds])).toEqual([
      [doomed.pid, []],
      [rescuer.pid, [recorded]],
    ]);
    // One completion, by the rescuer, into the message the killed worker had sent.
    expect(of(events, "end", jobIdFor(m1)).map((e) => [e.pid, e.messageIds])).toEqual([[rescuer.pid, [recorded]]]);
    const order = events.filter((e) => e.kind === "end").map((e) => e.jobId);
    expect(order).toEqual([jobIdFor(m1), jobIdFor(m2)]);
    expect(of(events, "giveup")).toHaveLength(0);
  });

  it("SIGTERM: finishes what fits in the grace period, hands the rest over at once, exits 0; one answer each", async () => {
    // A 20 s lock: if the hand-over relied on stall detection, this test would time out.
    const settings = {
      url: t.url,
      prefix: t.prefix,
      concurrency: 2,
      lockDurationMs: 20_000,
      stalledIntervalMs: 20_000,
    };
    const leaving = await spawnWorker({ ...settings, graceMs: 700 });
    const quick = message("tg:1", "1", "sleep:300");
    const next = message("tg:1", "2", "sleep:10");
    const long = message("tg:2", "1", "hang-once:10");
    for (const m of [quick, next, long]) await queue.enqueue(m);
    await waitFor("both answers to start", async () => of(await readEvents(t.redis, t.prefix), "start").length === 2);

    const termAt = Date.now();
    leaving.child.kill("SIGTERM");
    // The replacement starts while the leaving worker is still winding down.
    const staying = spawnWorker(settings);
    expect(await leaving.exited).toBe(0);
    expect(Date.now() - termAt).toBeLessThan(4000);
    let events = await readEvents(t.redis, t.prefix);
    expect(of(events, "end", jobIdFor(quick)).map((e) => e.pid)).toEqual([leaving.pid]);
    expect(of(events, "aborted", jobIdFor(long)).map((e) => e.cancel)).toEqual(["shutdown"]);
    // The leaving worker took nothing new once it was told to stop.
    expect(of(events, "start", jobIdFor(next)).filter((e) => e.pid === leaving.pid)).toHaveLength(0);
    expect(of(events, "closed").map((e) => e.pid)).toEqual([leaving.pid]);

    events = await waitFor(
      "the rest",
      async () => {
        const all = await readEvents(t.redis, t.prefix);
        return of(all, "end").length >= 3 ? all : undefined;
      },
      5000,
    );
    const stayingPid = (await staying).pid;
    for (const m of [quick, next, long]) expect(of(events, "end", jobIdFor(m))).toHaveLength(1);
    expect(of(events, "end", jobIdFor(long)).map((e) => [e.pid, e.messageIds])).toEqual([
      [stayingPid, [`msg-${leaving.pid}-${jobIdFor(long)}`]],
    ]);
    expect(of(events, "end", jobIdFor(next)).map((e) => e.pid)).toEqual([stayingPid]);
    expect(of(events, "giveup")).toHaveLength(0);
  });
});
