/**
 * Job outcomes as the queue runtime decides them, against the real Redis and BullMQ: every way an
 * attempt can end gives exactly one log line and one chatbot_jobs_total count.
 */
import { Writable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createJobOutcomes } from "../../src/observability/job-outcomes.js";
import { createLogger } from "../../src/observability/logger.js";
import { createMetrics, type Metrics } from "../../src/observability/metrics.js";
import { createCancelBus } from "../../src/queue/cancel-bus.js";
import { createMessageQueue, type MessageQueue } from "../../src/queue/message-queue.js";
import {
  createMessageWorker,
  type GiveUpHandler,
  type MessageProcessor,
  type MessageWorker,
} from "../../src/queue/message-worker.js";
import { ModelError } from "../../src/agent/model-error.js";
import { createTestRedis, type TestRedis } from "../support/redis.js";
import { message, waitFor } from "../queue/support/queue-test-kit.js";

let t: TestRedis;
let queue: MessageQueue;
const workers: MessageWorker[] = [];

beforeEach(() => {
  t = createTestRedis("outcomes");
  queue = createMessageQueue({ connection: t.redis, prefix: t.prefix });
});
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.close({ graceMs: 0 })));
  await queue.close();
  await t.cleanup();
});

function setup(process: MessageProcessor, opts: { attempts?: number; onGiveUp?: GiveUpHandler } = {}) {
  let text = "";
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      text += chunk.toString();
      callback();
    },
  });
  const metrics = createMetrics();
  const worker = createMessageWorker({
    connection: t.url,
    prefix: t.prefix,
    concurrency: 2,
    attempts: opts.attempts ?? 3,
    backoffMs: 20,
    repairIntervalMs: 0,
    process,
    onGiveUp: opts.onGiveUp ?? (async () => undefined),
    onOutcome: createJobOutcomes({ logger: createLogger({ level: "info", destination }), metrics }),
  });
  workers.push(worker);
  const lines = () =>
    text
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { worker, metrics, lines };
}

async function jobs(metrics: Metrics): Promise<Record<string, number>> {
  const metric = await metrics.jobs.get();
  return Object.fromEntries(metric.values.map((v) => [String(v.labels.outcome), v.value]));
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("job outcomes", () => {
  it("an answered job: one info line with its ids and timings, counted as done", async () => {
    const s = setup(async () => void (await sleep(250)));
    await s.worker.ready();
    const m = message("dc:42", "7", "hi");
    await queue.enqueue(m);
    await waitFor("the outcome line", () => s.lines().length > 0);
    expect(s.lines()).toEqual([
      expect.objectContaining({
        level: 30,
        msg: "job outcome",
        conversation: "dc:42",
        platform: "terminal",
        attempt: 1,
        outcome: "answered",
      }),
    ]);
    const [line] = s.lines();
    expect(line!.ms as number).toBeGreaterThanOrEqual(250);
    expect(line!.totalMs as number).toBeGreaterThanOrEqual(line!.ms as number);
    expect(await jobs(s.metrics)).toEqual({ done: 1 });
  });

  it("a failed attempt that will be retried: a warn line with the error, counted as retried; then the answer", async () => {
    let calls = 0;
    const s = setup(async () => {
      calls++;
      if (calls === 1) throw new Error("model down");
    });
    await s.worker.ready();
    await queue.enqueue(message("dc:42", "7", "hi"));
    await waitFor("two outcome lines", () => s.lines().length >= 2);
    expect(s.lines()).toEqual([
      expect.objectContaining({
        level: 40,
        outcome: "failed",
        attempt: 1,
        err: expect.objectContaining({ message: "model down" }),
      }),
      expect.objectContaining({ level: 30, outcome: "answered", attempt: 2 }),
    ]);
    expect(await jobs(s.metrics)).toEqual({ retried: 1, done: 1 });
  });

  it("the last attempt failing: one given-up line (before the give-up handler runs), with that attempt's time", async () => {
    let notified = false;
    const s = setup(
      async (_m, ctx) => {
        await sleep(ctx.isFinalAttempt ? 60 : 0);
        throw new Error("still down");
      },
      { attempts: 2, onGiveUp: async () => void (notified = true) },
    );
    await s.worker.ready();
    await queue.enqueue(message("dc:42", "7", "hi"));
    await waitFor("the give-up", () => notified);
    const lines = s.lines();
    expect(lines.map((l) => [l.outcome, l.attempt])).toEqual([
      ["failed", 1],
      ["given_up", 2],
    ]);
    expect(lines[1]).toEqual(
      expect.objectContaining({ level: 40, err: expect.objectContaining({ message: "still down" }) }),
    );
    expect(lines[1]!.ms as number).toBeGreaterThanOrEqual(60);
    expect(await jobs(s.metrics)).toEqual({ retried: 1, failed: 1 });
  });

  it("a failure that says no retry can help gives up at once, keeping its code for the give-up handler", async () => {
    let seen: unknown;
    const s = setup(
      async () => {
        throw new ModelError("context-exceeded", "the request exceeds the available context size", {
          retryable: false,
        });
      },
      { onGiveUp: async (_m, _ctx, error) => void (seen = error) },
    );
    await s.worker.ready();
    await queue.enqueue(message("dc:42", "7", "hi"));
    await waitFor("the give-up", () => seen);
    expect((seen as ModelError).code).toBe("context-exceeded");
    expect(s.lines().map((l) => [l.outcome, l.attempt])).toEqual([["given_up", 1]]);
    expect(await jobs(s.metrics)).toEqual({ failed: 1 });
  });

  it("/stop: stopped (done with what was written), whether the processor returns or throws", async () => {
    const bus = createCancelBus({ redis: t.redis.duplicate(), prefix: t.prefix });
    const s = setup(async (m, ctx) => {
      await new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve(), { once: true }));
      if (m.text === "throw") throw new Error("aborted");
    });
    await s.worker.ready();
    await queue.enqueue(message("dc:1", "1", "return"));
    await queue.enqueue(message("dc:2", "1", "throw"));
    await waitFor("both running", () => s.worker.running() === 2);
    await waitFor("stop 1", () => bus.stop("dc:1"));
    await waitFor("stop 2", () => bus.stop("dc:2"));
    await waitFor("two outcome lines", () => s.lines().length >= 2);
    expect(s.lines().map((l) => [l.outcome, l.level])).toEqual([
      ["stopped", 30],
      ["stopped", 30],
    ]);
    expect(await jobs(s.metrics)).toEqual({ cancelled: 2 });
    await bus.close();
  });

  it("shutdown: interrupted (handed back to the queue), through BullMQ's job signal", async () => {
    let reason: unknown;
    const s = setup(async (_m, ctx) => {
      await new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve(), { once: true }));
      reason = ctx.signal.reason;
    });
    await s.worker.ready();
    await queue.enqueue(message("dc:42", "7", "hi"));
    await waitFor("running", () => s.worker.running() === 1);
    await s.worker.close({ graceMs: 0 });
    expect(s.lines().map((l) => [l.outcome, l.level])).toEqual([["interrupted", 30]]);
    expect(reason).toEqual(expect.objectContaining({ name: "JobCancelledError", kind: "shutdown" }));
    expect(await jobs(s.metrics)).toEqual({ interrupted: 1 });
  });
});
