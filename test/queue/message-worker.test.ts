/**
 * The queue and worker runtime in one process, against the real Redis: dedupe,
 * ordering, retries with backoff, give-up, /stop, graceful close, repair of a lost
 * head job, a job BullMQ failed by itself, and prefix isolation.
 */
import { Queue, UnrecoverableError, Worker } from "bullmq";
import type { Redis } from "ioredis";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { cancelKindOf, createCancelBus } from "../../src/queue/cancel-bus.js";
import { jobIdFor } from "../../src/contracts/inbound-message.js";
import { createMessageQueue, type MessageQueue } from "../../src/queue/message-queue.js";
import {
  createMessageWorker,
  type JobContext,
  type MessageWorker,
  type MessageWorkerOptions,
} from "../../src/queue/message-worker.js";
import { QUEUE_NAME } from "../../src/redis/keys.js";
import { createReplyJournalStore } from "../../src/queue/reply-journal-store.js";
import { createHistoryStore } from "../../src/history/history-store.js";
import { createBotGateway } from "../../src/ingress/queue-gateway.js";
import { createTestRedis, type TestRedis } from "../support/redis.js";
import { message, waitFor } from "./support/queue-test-kit.js";

let t: TestRedis;
let queue: MessageQueue;
const workers: MessageWorker[] = [];
const extraClosers: (() => Promise<unknown>)[] = [];

beforeEach(() => {
  t = createTestRedis("mw");
  queue = createMessageQueue({ connection: t.redis, prefix: t.prefix });
});
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.close({ graceMs: 0 })));
  for (const close of extraClosers.splice(0)) await close();
  await queue.close();
  await t.cleanup();
});

interface Logged {
  kind: "start" | "end";
  jobId: string;
  conv: string;
  t: number;
  ctx: JobContext;
}

function startWorker(
  overrides: Partial<MessageWorkerOptions> & Pick<MessageWorkerOptions, "process">,
  prefix = t.prefix,
): MessageWorker {
  const worker = createMessageWorker({
    connection: t.url,
    prefix,
    concurrency: 4,
    attempts: 3,
    backoffMs: 40,
    repairIntervalMs: 0,
    onGiveUp: async () => undefined,
    ...overrides,
  });
  workers.push(worker);
  return worker;
}

describe("message queue + worker (one process)", () => {
  it("refuses an invalid message with a short reason and queues nothing", async () => {
    const result = await queue.enqueue({ ...message("c1", "1"), text: "" });
    expect(result.status).toBe("refused");
    expect(await t.redis.keys(`${t.prefix}*`)).toEqual([]);
  });

  it("answers the same update once, also when it is redelivered after the answer", async () => {
    const seen: string[] = [];
    const worker = startWorker({ process: async (m) => void seen.push(m.messageId) });
    await worker.ready();
    const m = message("tg:1", "42");
    expect(await queue.enqueue(m)).toEqual({ status: "queued", jobId: jobIdFor(m) });
    expect(await queue.enqueue(m)).toEqual({ status: "duplicate", jobId: jobIdFor(m) });
    await waitFor("the answer", () => seen.length === 1);
    // Redelivered after the job was answered and removed from BullMQ: still recognised.
    expect((await queue.enqueue(m)).status).toBe("duplicate");
    // The conversation's next message: its jobs run in order, so a second run of 42 would come first.
    await queue.enqueue(message("tg:1", "43"));
    await waitFor("the next answer", () => seen.length === 2);
    expect(seen).toEqual(["42", "43"]);
  });

  it("answers a conversation in order, one at a time, while other conversations run alongside", async () => {
    const log: Logged[] = [];
    // Each job runs until the other conversation has started one: a worker that ran them one at a time never ends.
    const signal = () => {
      let resolve: () => void = () => undefined;
      return { promise: new Promise<void>((r) => (resolve = r)), resolve: () => resolve() };
    };
    const started = { a: signal(), b: signal() };
    const worker = startWorker({
      concurrency: 4,
      async process(m, ctx) {
        log.push({ kind: "start", jobId: ctx.jobId, conv: m.conversationKey, t: Date.now(), ctx });
        const conv = m.conversationKey as "a" | "b";
        started[conv].resolve();
        await started[conv === "a" ? "b" : "a"].promise;
        log.push({ kind: "end", jobId: ctx.jobId, conv: m.conversationKey, t: Date.now(), ctx });
      },
    });
    await worker.ready();
    const sent = { a: [] as string[], b: [] as string[] };
    for (let i = 0; i < 4; i++) {
      for (const conv of ["a", "b"] as const) {
        const m = message(conv, String(i));
        sent[conv].push(jobIdFor(m));
        expect((await queue.enqueue(m)).status).toBe("queued");
      }
    }
    await waitFor("8 answers", () => log.filter((e) => e.kind === "end").length === 8);
    for (const conv of ["a", "b"] as const) {
      const events = log.filter((e) => e.conv === conv);
      expect(events.map((e) => `${e.kind}:${e.jobId}`)).toEqual(
        sent[conv].flatMap((id) => [`start:${id}`, `end:${id}`]),
      );
    }
    const overlapped = log.some((e, i) => e.kind === "start" && log[i + 1]?.kind === "start");
    expect(overlapped).toBe(true);
  });

  it("retries a failing message with growing backoff, then gives up once and the conversation moves on", async () => {
    const tries: { at: number; ctx: JobContext }[] = [];
    const givenUp: { error: unknown; ctx: JobContext }[] = [];
    const answered: string[] = [];
    const worker = startWorker({
      attempts: 3,
      backoffMs: 60,
      async process(m, ctx) {
        if (m.text === "broken") {
          tries.push({ at: Date.now(), ctx });
          if (ctx.attempt === 1) await ctx.journal.record(["m-1"]);
          throw new Error("model server 503");
        }
        answered.push(m.messageId);
      },
      async onGiveUp(_m, ctx, error) {
        givenUp.push({ ctx, error });
      },
    });
    await worker.ready();
    await queue.enqueue(message("c", "1", "broken"));
    await queue.enqueue(message("c", "2", "fine"));
    await waitFor("the next message", () => answered.includes("2"));
    expect(tries.map((x) => [x.ctx.attempt, x.ctx.isFinalAttempt])).toEqual([
      [1, false],
      [2, false],
      [3, true],
    ]);
    const gaps = tries.slice(1).map((x, i) => x.at - (tries[i] as { at: number }).at);
    expect(gaps[0]).toBeGreaterThanOrEqual(60);
    expect(gaps[1]).toBeGreaterThanOrEqual(120);
    expect(givenUp).toHaveLength(1);
    expect(String(givenUp[0]?.error)).toContain("503");
    // The give-up notice goes to the same reply message the first attempt sent.
    expect(givenUp[0]?.ctx.journal.messageIds).toEqual(["m-1"]);
    expect(tries.every((x) => x.ctx.journal.messageIds.length <= 1)).toBe(true);
    expect(answered).toEqual(["2"]);
  });

  it("a transient failure is retried with the same reply journal and no give-up", async () => {
    const journals: string[][] = [];
    let giveUps = 0;
    const worker = startWorker({
      async process(_m, ctx) {
        journals.push([...ctx.journal.messageIds]);
        if (ctx.attempt === 1) {
          await ctx.journal.record(["reply-1"]);
          throw new Error("connection reset");
        }
      },
      async onGiveUp() {
        giveUps++;
      },
    });
    await worker.ready();
    const m = message("c", "1");
    await queue.enqueue(m);
    const store = createReplyJournalStore({ redis: t.redis, prefix: t.prefix });
    await waitFor("final", () => store.isFinal(jobIdFor(m)));
    expect(journals).toEqual([[], ["reply-1"]]);
    expect(giveUps).toBe(0);
    // The failure count lives in the job's journal (read with it before each attempt) and expires with it:
    // no counter key of its own is left behind.
    expect(await t.redis.hget(`${t.prefix}:journal:${jobIdFor(m)}`, "failures")).toBe("1");
    const next = message("c", "2");
    await queue.enqueue(next);
    await waitFor("second answered", () => store.isFinal(jobIdFor(next)));
    expect(journals).toEqual([[], ["reply-1"], [], ["reply-1"]]);
    expect(await t.redis.keys(`${t.prefix}:failures:*`)).toEqual([]);
  });

  it("/stop aborts the running answer, is not retried, and the next message runs", async () => {
    const history = createHistoryStore({
      redis: t.redis,
      prefix: t.prefix,
      maxMessages: 10,
      maxTokens: 1000,
      ttlSeconds: 60,
    });
    const bus = createCancelBus({ redis: t.redis, prefix: t.prefix });
    extraClosers.push(() => bus.close());
    const gateway = createBotGateway({ queue, history, cancelBus: bus });
    const runs: string[] = [];
    let giveUps = 0;
    const worker = startWorker({
      async process(m, ctx) {
        runs.push(`start:${m.messageId}`);
        if (m.text !== "wait-stop") return;
        await new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve()));
        runs.push(`aborted:${cancelKindOf(ctx.signal)}`);
      },
      async onGiveUp() {
        giveUps++;
      },
    });
    await worker.ready();
    expect(await gateway.stop("c")).toBe(false);
    await gateway.enqueue(message("c", "1", "wait-stop"));
    await gateway.enqueue(message("c", "2", "x"));
    await waitFor("the first answer to run", () => runs.includes("start:1"));
    await waitFor("running marker", () => t.redis.exists(`${t.prefix}:running:c`));
    expect(await gateway.stop("c")).toBe(true);
    await waitFor("the next message", () => runs.includes("start:2"));
    expect(runs).toEqual(["start:1", "aborted:stop", "start:2"]);
    expect(giveUps).toBe(0);
    await waitFor("running marker gone", async () => !(await t.redis.exists(`${t.prefix}:running:c`)));
    expect(await gateway.stop("c")).toBe(false);
  });

  it("close() lets a short job finish within the grace period", async () => {
    let finished = false;
    let finish: () => void = () => {};
    const done = new Promise<void>((resolve) => (finish = resolve));
    const worker = startWorker({
      async process() {
        await done;
        finished = true;
      },
    });
    await worker.ready();
    const m = message("c", "1");
    await queue.enqueue(m);
    await waitFor("running", () => worker.running() === 1);
    // The job ends once close() has begun waiting for it.
    const closing = worker.close({ graceMs: 2000 });
    finish();
    await closing;
    expect(finished).toBe(true);
    expect(await createReplyJournalStore({ redis: t.redis, prefix: t.prefix }).isFinal(jobIdFor(m))).toBe(true);
  });

  it("close() aborts a job that outlives the grace period and hands it back at once, journal intact", async () => {
    const kinds: (string | undefined)[] = [];
    const first = startWorker({
      lockDurationMs: 30_000,
      async process(_m, ctx) {
        await ctx.journal.record(["reply-7"]);
        await new Promise<void>((_, reject) => ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason)));
      },
    });
    await first.ready();
    const m = message("c", "1");
    await queue.enqueue(m);
    await waitFor("running", () => first.running() === 1);
    const closeStarted = Date.now();
    await first.close({ graceMs: 100 });
    expect(Date.now() - closeStarted).toBeLessThan(3000);

    const seenJournal: string[][] = [];
    const second = startWorker({
      async process(_m, ctx) {
        kinds.push(cancelKindOf(ctx.signal));
        seenJournal.push([...ctx.journal.messageIds]);
      },
    });
    await second.ready();
    // Far sooner than the 30 s lock would take to expire: the job was moved back to wait.
    await waitFor("the retry elsewhere", () => seenJournal.length === 1, 3000);
    expect(seenJournal).toEqual([["reply-7"]]);
    expect(kinds).toEqual([undefined]);
  });

  it("repairs a conversation whose head job never reached BullMQ (crash between enqueue and add)", async () => {
    const m1 = message("c", "1");
    const m2 = message("c", "2");
    await queue.enqueue(m1);
    await queue.enqueue(m2);
    const bull = new Queue(QUEUE_NAME, { connection: t.redis, prefix: t.prefix });
    extraClosers.push(() => bull.close());
    await (await bull.getJob(jobIdFor(m1)))?.remove();
    expect(await bull.getJob(jobIdFor(m1))).toBeUndefined();

    const answered: string[] = [];
    const worker = startWorker({ process: async (m) => void answered.push(m.messageId) });
    await worker.ready();
    await waitFor("both answers", () => answered.length === 2);
    expect(answered).toEqual(["1", "2"]);
  });

  it("gives up on a head job that BullMQ failed by itself, and the conversation moves on", async () => {
    const m1 = message("c", "1");
    const m2 = message("c", "2");
    await queue.enqueue(m1);
    await queue.enqueue(m2);
    // A foreign consumer takes the job and BullMQ fails it (as when a job stalls too often).
    const raw = new Worker(QUEUE_NAME, null, {
      connection: t.redis.duplicate({ maxRetriesPerRequest: null }),
      prefix: t.prefix,
      autorun: false,
    });
    extraClosers.push(async () => {
      await raw.close();
      await (raw.opts.connection as Redis).quit();
    });
    const job = await raw.getNextJob("tok");
    expect(job?.id).toBe(jobIdFor(m1));
    await job?.moveToFailed(new UnrecoverableError("job stalled more than allowable limit"), "tok", false);
    expect(await job?.getState()).toBe("failed");

    const givenUp: string[] = [];
    const answered: string[] = [];
    const worker = startWorker({
      repairIntervalMs: 100,
      process: async (m) => void answered.push(m.messageId),
      async onGiveUp(m, ctx, error) {
        givenUp.push(`${m.messageId}:${ctx.isFinalAttempt}:${String(error)}`);
      },
    });
    await worker.ready();
    await waitFor("the next message", () => answered.includes("2"));
    expect(givenUp).toEqual(["1:true:Error: job stalled more than allowable limit"]);
    expect(answered).toEqual(["2"]);
  });

  it("keeps deployments apart: a worker only sees its own prefix", async () => {
    const otherPrefix = `${t.prefix}-other`;
    const otherQueue = createMessageQueue({ connection: t.redis, prefix: otherPrefix });
    extraClosers.push(() => otherQueue.close());
    const m = message("c", "1");
    expect((await queue.enqueue(m)).status).toBe("queued");
    // Same platform, chat and message id in the other deployment: not a duplicate there.
    expect((await otherQueue.enqueue(m)).status).toBe("queued");

    const mine: string[] = [];
    const worker = startWorker({ process: async (msg, ctx) => void mine.push(`${msg.messageId}@${ctx.jobId}`) });
    await worker.ready();
    await waitFor("my answer", () => mine.length === 1);
    // My deployment's next message is answered while the other's (queued before it) is still waiting there.
    await queue.enqueue(message("c", "2"));
    await waitFor("my next answer", () => mine.length === 2);
    expect(mine.map((answer) => answer.split("@")[0])).toEqual(["1", "2"]);
    expect(await t.redis.llen(`${otherPrefix}:conv:c:order`)).toBe(1);

    const theirs: string[] = [];
    const other = startWorker({ process: async (msg) => void theirs.push(msg.messageId) }, otherPrefix);
    await other.ready();
    await waitFor("their answer", () => theirs.length === 1);
    expect(mine).toHaveLength(2);
  });
});
