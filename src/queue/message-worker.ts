/**
 * The worker runtime: takes message jobs from BullMQ and runs the caller's
 * processor for each, keeping the guarantees of conversation-order.ts (one job per
 * conversation at a time, in order), retrying transient failures with backoff,
 * giving up cleanly (onGiveUp, then the conversation advances), honouring /stop
 * from any process, and shutting down gracefully.
 *
 * Retries: the processor throws → the job is moved to BullMQ's delayed set for
 * backoffMs·2^(attempt-1) (capped) without consuming BullMQ attempts; BullMQ's own
 * attempts only guard the runtime's Redis calls. Stalled jobs (a worker died) come
 * back with the same attempt number and the same reply journal.
 *
 * Shutdown: `close()` stops taking jobs, lets in-flight jobs finish for `graceMs`,
 * then aborts them (signal reason JobCancelledError("shutdown")); an aborted job is
 * moved back to wait at once, not marked final, and another process continues it
 * with the same journal, so the user sees one answer.
 */
import { DelayedError, type Job, Queue, UnrecoverableError, WaitingError, Worker } from "bullmq";
import { Redis } from "ioredis";
import type { ReplyJournal } from "../contracts/reply-journal.js";
import { type CancelKind, createCancelBus, JobCancelledError } from "./cancel-bus.js";
import { createConversationOrder } from "./conversation-order.js";
import { type InboundMessage, inboundMessageSchema } from "../contracts/inbound-message.js";
import { DEFAULT_DEDUPE_TTL_SECONDS, DEFAULT_PAYLOAD_TTL_SECONDS } from "./message-queue.js";
import { QUEUE_NAME, queueKeys } from "../redis/keys.js";
import { createReplyJournalStore } from "./reply-journal-store.js";
import { createRunnerHeartbeat, type RunnerClaim } from "./runner-heartbeat.js";

/** What the processor knows about the job it runs. */
export interface JobContext {
  jobId: string;
  /** 1 for the first try; a stalled-and-recovered job keeps its number. */
  attempt: number;
  /** A failure now means giving up (onGiveUp runs next). */
  isFinalAttempt: boolean;
  /** Aborted by /stop or shutdown; `cancelKindOf(signal)` tells which. */
  signal: AbortSignal;
  /** Message ids this job's reply already sent (from earlier attempts), persisted in Redis. */
  journal: ReplyJournal;
}

/** Answers one message. Throw for transient failures (retried); return when the reply is complete or stopped. */
export type MessageProcessor = (message: InboundMessage, ctx: JobContext) => Promise<void>;

/** Runs once when a message is given up on (e.g. shows "model unavailable" in the reply). */
export type GiveUpHandler = (message: InboundMessage, ctx: JobContext, error: unknown) => Promise<void>;

/** The log calls the runtime makes (a pino Logger fits). */
export interface QueueLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** Options of createMessageWorker. */
export interface MessageWorkerOptions {
  /** Redis URL, or a factory returning a fresh ioredis client (the worker owns and closes it). */
  connection: string | (() => Redis);
  prefix: string;
  /** Jobs (= conversations) this process runs at once: WORKER_CONCURRENCY. */
  concurrency: number;
  /** BullMQ lock: a dead worker's job is recovered after about this long. Default 30 s. */
  lockDurationMs?: number;
  /** How often stalled jobs are looked for. Default 30 s. */
  stalledIntervalMs?: number;
  /** Stalls tolerated before BullMQ fails the job (then it is given up on). Default 2. */
  maxStalledCount?: number;
  /** Tries per message, including the first. Default 4. */
  attempts?: number;
  /** First retry delay; doubles per retry. Default 2000 ms. */
  backoffMs?: number;
  /** Cap of the retry delay. Default 60 s. */
  maxBackoffMs?: number;
  /** Lifetime of reply journals. Default 1 day. */
  journalTtlSeconds?: number;
  /** Lifetime of the /stop "running" marker (refreshed while running). Default 15 s. */
  runningTtlMs?: number;
  /** How often a running attempt proves it is alive to other processes. Default a quarter of the lock, at most 1 s. */
  heartbeatMs?: number;
  /** Period of the repair sweep over conversations with queued messages; 0 = only at start. Default 30 s. */
  repairIntervalMs?: number;
  /** Grace period of close() when none is given. Default 10 s. */
  defaultGraceMs?: number;
  process: MessageProcessor;
  onGiveUp: GiveUpHandler;
  logger?: QueueLogger;
}

/** A running worker. */
export interface MessageWorker {
  /** Resolves once the worker takes jobs and its first repair sweep is done. */
  ready(): Promise<void>;
  /** Jobs running in this process right now. */
  running(): number;
  /** Stops taking jobs, waits up to `graceMs` for in-flight ones, aborts the rest (retried elsewhere), closes connections. */
  close(opts?: { graceMs?: number }): Promise<void>;
}

// After grace + this, close() stops waiting for a processor that ignores its signal.
const HARD_CLOSE_EXTRA_MS = 5_000;
const SWEEP_PAGE = 1000;

interface InFlight {
  abort(kind: CancelKind): void;
}

const silentLogger: QueueLogger = { info: () => undefined, warn: () => undefined, error: () => undefined };

function errorSummary(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/** Starts a worker on the message queue of `prefix`. */
export function createMessageWorker(opts: MessageWorkerOptions): MessageWorker {
  const log = opts.logger ?? silentLogger;
  const attempts = Math.max(1, opts.attempts ?? 4);
  const backoffMs = opts.backoffMs ?? 2000;
  const maxBackoffMs = opts.maxBackoffMs ?? 60_000;
  const keys = queueKeys(opts.prefix);

  const makeConnection =
    typeof opts.connection === "string"
      ? // Workers wait out Redis restarts instead of failing jobs half-way (issue 6).
        (() => new Redis(opts.connection as string, { maxRetriesPerRequest: null }))
      : opts.connection;
  const commands = makeConnection();
  commands.on("error", (error: unknown) => log.warn({ err: errorSummary(error) }, "redis connection error"));
  // BullMQ insists on maxRetriesPerRequest: null for the connection it blocks on.
  const workerConnection = commands.duplicate({ maxRetriesPerRequest: null });
  workerConnection.on("error", () => undefined);

  const queue = new Queue(QUEUE_NAME, { connection: commands, prefix: opts.prefix });
  queue.on("error", (error: Error) => log.warn({ err: errorSummary(error) }, "queue error"));
  const order = createConversationOrder({
    redis: commands,
    keys,
    queue,
    dedupeTtlSeconds: DEFAULT_DEDUPE_TTL_SECONDS,
    payloadTtlSeconds: DEFAULT_PAYLOAD_TTL_SECONDS,
  });
  const journals = createReplyJournalStore({ redis: commands, prefix: opts.prefix, ttlSeconds: opts.journalTtlSeconds });
  const bus = createCancelBus({
    redis: commands,
    prefix: opts.prefix,
    runningTtlMs: opts.runningTtlMs,
    onError: (error) => log.warn({ err: errorSummary(error) }, "cancel bus error"),
  });
  const lockDurationMs = opts.lockDurationMs ?? 30_000;
  const heartbeatMs = opts.heartbeatMs ?? Math.max(50, Math.min(1000, Math.floor(lockDurationMs / 4)));
  const runners = createRunnerHeartbeat({
    redis: commands,
    prefix: opts.prefix,
    beatMs: heartbeatMs,
    onError: (error) => log.warn({ err: errorSummary(error) }, "runner heartbeat failed"),
  });
  const inFlight = new Map<string, InFlight>();
  let closing: Promise<void> | undefined;
  let sweeping: Promise<void> | undefined;

  async function failuresSoFar(jobId: string): Promise<number> {
    return Number((await commands.get(keys.failures(jobId))) ?? 0) || 0;
  }

  async function giveUp(message: InboundMessage, ctx: JobContext, error: unknown): Promise<void> {
    try {
      await opts.onGiveUp(message, ctx, error);
    } catch (giveUpError) {
      // The conversation must advance even if the notice could not be shown.
      log.error({ jobId: ctx.jobId, err: errorSummary(giveUpError) }, "onGiveUp failed");
    }
  }

  /** One attempt of the caller's processor, with retry / give-up / shutdown handling. */
  async function attempt(job: Job, token: string | undefined, message: InboundMessage, jobId: string): Promise<void> {
    const controller = new AbortController();
    let cancel: CancelKind | undefined;
    const abort = (kind: CancelKind): void => {
      if (cancel) return;
      cancel = kind;
      controller.abort(new JobCancelledError(kind));
    };

    inFlight.set(jobId, { abort });
    let runner: RunnerClaim | undefined;
    let running: { release(): Promise<void> } | undefined;
    let ctx!: JobContext;
    let outcome: { ok: true; cancel?: CancelKind } | { ok: false; error: unknown; cancel?: CancelKind };
    try {
      // Independent round trips, issued together so they share one pipeline: the job's first visible request
      // (typing, placeholder) waits for all of them (job-start-latency.test.ts: 9 trips before, under 4 now).
      const [failures, journal, claimed, tracked] = await Promise.allSettled([
        failuresSoFar(jobId),
        journals.load(jobId),
        runners.claim(jobId),
        bus.track(message.conversationKey, jobId, () => abort("stop")),
      ]);
      // Whatever succeeded is released in `finally`, even if a sibling failed.
      if (claimed.status === "fulfilled") runner = claimed.value;
      if (tracked.status === "fulfilled") running = tracked.value;
      for (const settled of [failures, journal, claimed, tracked]) if (settled.status === "rejected") throw settled.reason;
      const attemptNo = (failures as PromiseFulfilledResult<number>).value + 1;
      ctx = {
        jobId,
        attempt: attemptNo,
        isFinalAttempt: attemptNo >= attempts,
        signal: controller.signal,
        journal: (journal as PromiseFulfilledResult<ReplyJournal>).value,
      };
      // `cancel` is read when the processor settles: an abort that comes later does not change the outcome.
      outcome = await opts.process(message, ctx).then(
        () => ({ ok: true as const, cancel }),
        (error: unknown) => ({ ok: false as const, error, cancel }),
      );
    } finally {
      inFlight.delete(jobId);
      // Both before the job is handed on (moveToWait / moveToDelayed below): the next run must not wait for this one.
      await Promise.all([
        running?.release().catch((error: unknown) => log.warn({ jobId, err: errorSummary(error) }, "release failed")),
        runner?.release().catch((error: unknown) => log.warn({ jobId, err: errorSummary(error) }, "runner release failed")),
      ]);
    }
    const { attempt: attemptNo, isFinalAttempt } = ctx;

    if (outcome.cancel === "shutdown") {
      // Not final: hand the job to another process now instead of waiting for the lock to expire.
      try {
        await job.moveToWait(token);
      } catch (error) {
        log.warn({ jobId, err: errorSummary(error) }, "could not move job back to wait; it will be recovered as stalled");
      }
      log.info({ jobId }, "job interrupted by shutdown, handed back to the queue");
      throw new WaitingError();
    }
    if (!outcome.ok && outcome.cancel !== "stop") {
      const unrecoverable = outcome.error instanceof UnrecoverableError;
      if (!isFinalAttempt && !unrecoverable) {
        await commands.set(keys.failures(jobId), String(attemptNo), "EX", 7 * 24 * 3600);
        const delay = Math.min(maxBackoffMs, backoffMs * 2 ** (attemptNo - 1));
        log.warn({ jobId, attempt: attemptNo, delay, err: errorSummary(outcome.error) }, "job failed, retrying");
        await job.moveToDelayed(Date.now() + delay, token);
        throw new DelayedError();
      }
      log.warn({ jobId, attempt: attemptNo, err: errorSummary(outcome.error) }, "job failed, giving up");
      await giveUp(message, ctx, outcome.error);
    }
    await journals.markFinal(jobId);
  }

  async function processJob(job: Job, token?: string): Promise<string> {
    const jobId = job.id;
    if (!jobId) throw new UnrecoverableError("job without id");
    const parsed = inboundMessageSchema.safeParse(job.data);
    if (!parsed.success) {
      const ck = (job.data as { conversationKey?: unknown } | undefined)?.conversationKey;
      if (typeof ck === "string") await order.advance(ck, jobId);
      throw new UnrecoverableError(`invalid message payload: ${parsed.error.issues[0]?.message ?? "unknown"}`);
    }
    const message = parsed.data;
    const ck = message.conversationKey;
    // Read together (one pipeline) rather than one after the other: they delay the first visible request.
    // othersAlive only reads unless a runner record is there (rare: an earlier run alive or killed).
    const [head, final, othersAlive] = await Promise.all([order.isHead(ck, jobId), journals.isFinal(jobId), runners.othersAlive(jobId)]);
    if (!head) {
      // Already answered (a retry after advancing, or a stale re-add): only make sure the conversation moves on.
      await order.ensureHead(ck);
      return "not-head";
    }
    if (!final) {
      if (othersAlive) {
        // An earlier run (in this process or another) still answers it: its lock expired, e.g. while Redis was
        // away, and BullMQ handed the job out again. A second run would answer twice. Look again later; by then
        // it has finished (not the head any more) or stopped beating (died: this process takes over).
        log.warn({ jobId }, "job handed out again while an earlier run still answers it; looking again later");
        await job.moveToDelayed(Date.now() + heartbeatMs * 4, token);
        throw new DelayedError();
      }
      await attempt(job, token, message, jobId);
    }
    await order.advance(ck, jobId);
    await commands.del(keys.failures(jobId));
    return "answered";
  }

  const worker = new Worker(QUEUE_NAME, processJob, {
    connection: workerConnection,
    prefix: opts.prefix,
    concurrency: opts.concurrency,
    lockDuration: lockDurationMs,
    stalledInterval: opts.stalledIntervalMs ?? 30_000,
    maxStalledCount: opts.maxStalledCount ?? 2,
  });
  worker.on("error", (error: Error) => log.warn({ err: errorSummary(error) }, "worker error"));
  worker.on("stalled", (jobId: string) => log.warn({ jobId }, "stalled job recovered"));
  // A job BullMQ failed for good blocks its conversation until swept: sweep now rather than at the next tick.
  worker.on("failed", () => void runSweep());

  /** Gives up on a head job BullMQ failed by itself (stalled too often, runtime errors). */
  async function giveUpOnFailedHead(job: Job, ck: string): Promise<void> {
    const jobId = job.id as string;
    const claimed = await commands.set(keys.giveUp(jobId), "1", "EX", 300, "NX");
    if (claimed !== "OK") return;
    const parsed = inboundMessageSchema.safeParse(job.data);
    if (parsed.success && !(await journals.isFinal(jobId))) {
      const ctx: JobContext = {
        jobId,
        attempt: (await failuresSoFar(jobId)) + 1,
        isFinalAttempt: true,
        signal: new AbortController().signal,
        journal: await journals.load(jobId),
      };
      log.warn({ jobId, reason: job.failedReason }, "job failed in the queue, giving up");
      await giveUp(parsed.data, ctx, new Error(job.failedReason || "job failed"));
      await journals.markFinal(jobId);
    }
    await order.advance(ck, jobId);
  }

  /** Puts every stuck conversation back in motion: missing head jobs re-added, failed ones given up. */
  async function sweep(): Promise<void> {
    for (const ck of await order.pendingConversations(SWEEP_PAGE)) {
      if (closing) return;
      try {
        const headId = await commands.lindex(keys.order(ck), 0);
        const job = headId ? await queue.getJob(headId) : undefined;
        const state = job ? await job.getState() : "missing";
        if (job && state === "failed") await giveUpOnFailedHead(job, ck);
        else if (job && headId && state === "completed") await order.advance(ck, headId);
        else if (!job) await order.ensureHead(ck);
      } catch (error) {
        log.warn({ conversationKey: ck, err: errorSummary(error) }, "repair sweep failed for a conversation");
      }
    }
  }

  function runSweep(): Promise<void> {
    sweeping ??= sweep()
      .catch((error: unknown) => log.warn({ err: errorSummary(error) }, "repair sweep failed"))
      .finally(() => {
        sweeping = undefined;
      });
    return sweeping;
  }
  const repairEvery = opts.repairIntervalMs ?? 30_000;
  const sweepTimer = repairEvery > 0 ? setInterval(() => void runSweep(), repairEvery) : undefined;
  sweepTimer?.unref();
  const readyPromise = worker.waitUntilReady().then(() => runSweep());
  readyPromise.catch(() => undefined);

  async function quit(connection: Redis): Promise<void> {
    try {
      await Promise.race([connection.quit(), new Promise((_, reject) => setTimeout(reject, 2000).unref())]);
    } catch {
      connection.disconnect();
    }
  }

  return {
    ready: () => readyPromise,
    running: () => inFlight.size,
    close(closeOpts = {}) {
      closing ??= (async () => {
        const graceMs = closeOpts.graceMs ?? opts.defaultGraceMs ?? 10_000;
        if (sweepTimer) clearInterval(sweepTimer);
        const workerClosed = worker.close();
        const graceTimer = setTimeout(() => {
          for (const job of inFlight.values()) job.abort("shutdown");
        }, graceMs);
        let hardTimer: NodeJS.Timeout | undefined;
        const hardDeadline = new Promise<void>((resolve) => {
          hardTimer = setTimeout(resolve, graceMs + HARD_CLOSE_EXTRA_MS);
        });
        try {
          await Promise.race([workerClosed.catch(() => undefined), hardDeadline]);
        } finally {
          clearTimeout(graceTimer);
          clearTimeout(hardTimer);
        }
        if (inFlight.size > 0) log.error({ jobs: [...inFlight.keys()] }, "jobs ignored their abort signal; they will be recovered as stalled");
        await sweeping;
        await bus.close();
        await queue.close().catch(() => undefined);
        await quit(workerConnection);
        await quit(commands);
      })();
      return closing;
    },
  };
}
