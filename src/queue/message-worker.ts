/**
 * The worker runtime: runs the caller's processor for each BullMQ job, one job per conversation at a time in
 * order (conversation-order.ts), with retries, give-up, /stop from any process and graceful close.
 * A failed attempt is moved to the delayed set with our own backoff (BullMQ's attempts only guard the runtime's
 * Redis calls); a stalled job comes back with the same attempt number and reply journal. On close, jobs still
 * running after `graceMs` are aborted (JobCancelledError("shutdown")) and moved back to wait at once, so another
 * process continues them with the same journal and the user sees one answer.
 */
import { DelayedError, type Job, Queue, UnrecoverableError, Worker } from "bullmq";
import { Redis } from "ioredis";
import type { JobOutcomeEvent } from "../contracts/job-outcome.js";
import { type InboundMessage, inboundMessageSchema } from "../contracts/inbound-message.js";
import { QUEUE_NAME, queueKeys } from "../redis/keys.js";
import { type CancelKind, createCancelBus } from "./cancel-bus.js";
import { createConversationOrder } from "./conversation-order.js";
import { runAttempt, type AttemptDeps } from "./job-attempt.js";
import type { GiveUpHandler, JobContext, MessageProcessor } from "./job-context.js";
import { errorSummary, silentLogger, type QueueLogger } from "./queue-logger.js";
import { createRepairSweep } from "./repair-sweep.js";
import { createReplyJournalStore, DEFAULT_JOURNAL_TTL_SECONDS } from "./reply-journal-store.js";
import { createRunnerHeartbeat } from "./runner-heartbeat.js";

export type { GiveUpHandler, JobContext, MessageProcessor, ProcessResult } from "./job-context.js";
export type { QueueLogger } from "./queue-logger.js";

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
  /** Tries per message, including the first. Default 4. */
  attempts?: number;
  /** First retry delay; doubles per retry, up to 60 s. Default 2000 ms. */
  backoffMs?: number;
  /** Lifetime of the /stop "running" marker (refreshed while running). Default 15 s. */
  runningTtlMs?: number;
  /** Period of the repair sweep over conversations with queued messages; 0 = only at start. Default 30 s. */
  repairIntervalMs?: number;
  /** Grace period of close() when none is given. Default 10 s. */
  defaultGraceMs?: number;
  process: MessageProcessor;
  onGiveUp: GiveUpHandler;
  /** Told once per attempt how it ended (logs and metrics subscribe here). */
  onOutcome?(event: JobOutcomeEvent): void;
  logger?: QueueLogger;
}

/** A running worker. */
export interface MessageWorker {
  /** Resolves once the worker takes jobs and its first repair sweep is done. */
  ready(): Promise<void>;
  /** Jobs running in this process right now. */
  running(): number;
  /** Stops taking jobs, waits up to `graceMs` for running ones, aborts the rest (retried elsewhere), disconnects. */
  close(opts?: { graceMs?: number }): Promise<void>;
}

// After grace + this, close() stops waiting for a processor that ignores its signal.
const HARD_CLOSE_EXTRA_MS = 5_000;

async function quit(connection: Redis): Promise<void> {
  try {
    await Promise.race([connection.quit(), new Promise((_, reject) => setTimeout(reject, 2000).unref())]);
  } catch {
    connection.disconnect();
  }
}

/** Starts a worker on the message queue of `prefix`. */
export function createMessageWorker(opts: MessageWorkerOptions): MessageWorker {
  const log = opts.logger ?? silentLogger;
  const keys = queueKeys(opts.prefix);
  // Workers wait out Redis restarts instead of failing jobs half-way.
  const commands =
    typeof opts.connection === "string"
      ? new Redis(opts.connection, { maxRetriesPerRequest: null })
      : opts.connection();
  commands.on("error", (error: unknown) => log.warn({ err: errorSummary(error) }, "redis connection error"));
  // BullMQ insists on maxRetriesPerRequest: null for the connection it blocks on.
  const workerConnection = commands.duplicate({ maxRetriesPerRequest: null });
  workerConnection.on("error", () => undefined);

  const queue = new Queue(QUEUE_NAME, { connection: commands, prefix: opts.prefix });
  queue.on("error", (error: Error) => log.warn({ err: errorSummary(error) }, "queue error"));
  const order = createConversationOrder({ redis: commands, keys, queue });
  const journals = createReplyJournalStore({ redis: commands, prefix: opts.prefix });
  const bus = createCancelBus({
    redis: commands,
    prefix: opts.prefix,
    runningTtlMs: opts.runningTtlMs,
    onError: (error) => log.warn({ err: errorSummary(error) }, "cancel bus error"),
  });
  const lockDurationMs = opts.lockDurationMs ?? 30_000;
  // How often a running attempt proves it is alive to other processes.
  const heartbeatMs = Math.max(50, Math.min(1000, Math.floor(lockDurationMs / 4)));
  // Runner records live in the jobs' journals: the journal's one HMGET before an attempt reads the record too,
  // and a claim gives the journal its lifetime (the reply's first journal write is then a plain HSET).
  const runners = createRunnerHeartbeat({
    redis: commands,
    prefix: opts.prefix,
    beatMs: heartbeatMs,
    sharedRecord: { key: keys.journal, ttlMs: DEFAULT_JOURNAL_TTL_SECONDS * 1000 },
    onError: (error) => log.warn({ err: errorSummary(error) }, "runner heartbeat failed"),
  });
  const running = new Set<string>();
  let closing: Promise<void> | undefined;
  const onOutcome = (event: JobOutcomeEvent) => {
    try {
      opts.onOutcome?.(event);
    } catch (error) {
      log.warn({ jobId: event.jobId, err: errorSummary(error) }, "outcome listener failed");
    }
  };

  async function giveUp(message: InboundMessage, ctx: JobContext, error: unknown): Promise<void> {
    try {
      await opts.onGiveUp(message, ctx, error);
    } catch (giveUpError) {
      // The conversation must advance even if the notice could not be shown.
      log.error({ jobId: ctx.jobId, err: errorSummary(giveUpError) }, "onGiveUp failed");
    }
  }

  const attemptDeps: AttemptDeps = {
    journals,
    bus,
    runners: {
      async claim(jobId) {
        const claim = await runners.claim(jobId);
        journals.lives(jobId);
        return claim;
      },
    },
    attempts: Math.max(1, opts.attempts ?? 4),
    backoffMs: opts.backoffMs ?? 2000,
    process: opts.process,
    giveUp,
    cancelJob: (jobId: string, kind: CancelKind) => worker.cancelJob(jobId, kind),
    onOutcome,
    log,
  };

  async function processJob(job: Job, token: string | undefined, signal?: AbortSignal): Promise<string> {
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
    // One pipeline: these delay the first visible request. The journal brings the runner record too.
    const [head, opened] = await Promise.all([order.isHead(ck, jobId), journals.open(jobId)]);
    if (!head) {
      // Already answered (a retry after advancing, or a stale re-add): only make sure the conversation moves on.
      await order.ensureHead(ck);
      return "not-head";
    }
    if (!opened.final) {
      if (await runners.othersAlive(jobId, opened.runner)) {
        // An earlier run still answers it (its lock expired, e.g. while Redis was away): a second run would
        // answer twice. Look again later, when it has finished or stopped beating (died: we take over).
        log.warn({ jobId }, "job handed out again while an earlier run still answers it; looking again later");
        await job.moveToDelayed(Date.now() + heartbeatMs * 4, token);
        throw new DelayedError();
      }
      running.add(jobId);
      try {
        await runAttempt(attemptDeps, job, token, message, opened, signal);
      } finally {
        running.delete(jobId);
      }
    }
    // The journal is final now: a later hand-out of this job only advances it.
    await order.advance(ck, jobId);
    return "answered";
  }

  const worker = new Worker(QUEUE_NAME, processJob, {
    connection: workerConnection,
    prefix: opts.prefix,
    concurrency: opts.concurrency,
    lockDuration: lockDurationMs,
    stalledInterval: opts.stalledIntervalMs ?? 30_000,
    // Stalls tolerated before BullMQ fails the job (then it is given up on).
    maxStalledCount: 2,
  });
  worker.on("error", (error: Error) => log.warn({ err: errorSummary(error) }, "worker error"));
  worker.on("stalled", (jobId: string) => log.warn({ jobId }, "stalled job recovered"));

  const sweep = createRepairSweep({
    commands,
    keys,
    queue,
    order,
    journals,
    giveUp,
    onOutcome,
    closing: () => closing !== undefined,
    log,
  });
  // A job BullMQ failed for good blocks its conversation until swept: sweep now rather than at the next tick.
  worker.on("failed", () => void sweep.run());
  const repairEvery = opts.repairIntervalMs ?? 30_000;
  const sweepTimer = repairEvery > 0 ? setInterval(() => void sweep.run(), repairEvery) : undefined;
  sweepTimer?.unref();
  const readyPromise = worker.waitUntilReady().then(() => sweep.run());
  readyPromise.catch(() => undefined);

  /** Stops taking jobs, gives running ones `graceMs`, then aborts them; gives up waiting after a hard deadline. */
  async function drain(graceMs: number): Promise<void> {
    const workerClosed = worker.close();
    const graceTimer = setTimeout(() => worker.cancelAllJobs("shutdown"), graceMs);
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
    if (running.size > 0)
      log.error({ jobs: [...running] }, "jobs ignored their abort signal; they will be recovered as stalled");
  }

  return {
    ready: () => readyPromise,
    running: () => running.size,
    close(closeOpts = {}) {
      closing ??= (async () => {
        if (sweepTimer) clearInterval(sweepTimer);
        await drain(closeOpts.graceMs ?? opts.defaultGraceMs ?? 10_000);
        await sweep.current();
        await bus.close();
        await queue.close().catch(() => undefined);
        await quit(workerConnection);
        await quit(commands);
      })();
      return closing;
    },
  };
}
