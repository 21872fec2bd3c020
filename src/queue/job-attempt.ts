/**
 * One attempt of the caller's processor: its context, the processor run under the job's signal, and its end
 * decided once (answered, stopped, interrupted, retry or give-up), mapped to BullMQ and announced as one event.
 */
import { DelayedError, type Job, WaitingError } from "bullmq";
import { assertNever } from "../contracts/agent-events.js";
import type { InboundMessage } from "../contracts/inbound-message.js";
import type { JobOutcomeEvent } from "../contracts/job-outcome.js";
import { type CancelBus, type CancelKind, JobCancelledError } from "./cancel-bus.js";
import { isRetryable, type JobContext, type MessageProcessor, type ProcessResult } from "./job-context.js";
import type { OpenedJournal, ReplyJournalStore } from "./reply-journal-store.js";
import type { RunnerClaim, RunnerHeartbeat } from "./runner-heartbeat.js";
import { errorSummary, type QueueLogger } from "./queue-logger.js";

/** How an attempt ended, as the runtime decided it. */
export type AttemptEnd =
  | { kind: "answered" }
  | { kind: "stopped" }
  | { kind: "interrupted" }
  | { kind: "retry"; error: unknown; delayMs: number }
  | { kind: "give-up"; error: unknown };

/** What the processor did: returned a result, or threw. */
export type Settled = { ok: true; result: ProcessResult } | { ok: false; error: unknown };

/** Cap of the retry delay, which doubles per attempt from `backoffMs`. */
const MAX_BACKOFF_MS = 60_000;

/** Decides an attempt's end from what the processor did and why its signal was aborted when it settled. */
export function decideEnd(
  settled: Settled,
  cancel: CancelKind | undefined,
  ctx: Pick<JobContext, "attempt" | "isFinalAttempt">,
  backoffMs: number,
): AttemptEnd {
  if (cancel === "shutdown" || (settled.ok && settled.result === "interrupted")) return { kind: "interrupted" };
  if (cancel === "stop" || (settled.ok && settled.result === "stopped")) return { kind: "stopped" };
  if (settled.ok) return { kind: "answered" };
  if (ctx.isFinalAttempt || !isRetryable(settled.error)) return { kind: "give-up", error: settled.error };
  return {
    kind: "retry",
    error: settled.error,
    delayMs: Math.min(MAX_BACKOFF_MS, backoffMs * 2 ** (ctx.attempt - 1)),
  };
}

/** What an attempt needs from the runtime. */
export interface AttemptDeps {
  journals: ReplyJournalStore;
  bus: Pick<CancelBus, "track">;
  runners: Pick<RunnerHeartbeat, "claim">;
  /** Tries per message, including the first. */
  attempts: number;
  /** First retry delay. */
  backoffMs: number;
  process: MessageProcessor;
  /** Runs the caller's give-up handler (never throws). */
  giveUp(message: InboundMessage, ctx: JobContext, error: unknown): Promise<void>;
  /** Asks BullMQ to abort the job's signal (false when BullMQ does not track the job). */
  cancelJob(jobId: string, kind: CancelKind): boolean;
  onOutcome(event: JobOutcomeEvent): void;
  log: QueueLogger;
}

/** Runs one attempt of `message`'s job and settles it with BullMQ (throws its Delayed/Waiting errors to hand it on). */
export async function runAttempt(
  deps: AttemptDeps,
  job: Job,
  token: string | undefined,
  message: InboundMessage,
  opened: Pick<OpenedJournal, "failures" | "journal">,
  signal?: AbortSignal,
): Promise<void> {
  const jobId = job.id as string;
  const controller = new AbortController();
  let cancel: CancelKind | undefined;
  const abort = (kind: CancelKind): void => {
    if (cancel) return;
    cancel = kind;
    controller.abort(new JobCancelledError(kind));
  };
  // BullMQ's signal for this job (cancelJob / cancelAllJobs) is the one that aborts it; our reason says why.
  const onBullAbort = () => abort(signal?.reason === "shutdown" ? "shutdown" : "stop");
  if (signal?.aborted) onBullAbort();
  else signal?.addEventListener("abort", onBullAbort, { once: true });
  const stop = () => {
    if (!deps.cancelJob(jobId, "stop")) abort("stop");
  };

  let runner: RunnerClaim | undefined;
  let running: { release(): Promise<void> } | undefined;
  let ctx!: JobContext;
  let answered = false;
  let settled: Settled;
  let cancelAtSettle: CancelKind | undefined;
  const startedAt = Date.now();
  try {
    // Issued together to share one pipeline: the job's first visible request waits for both.
    const [claimed, tracked] = await Promise.allSettled([
      deps.runners.claim(jobId),
      deps.bus.track(message.conversationKey, jobId, stop),
    ]);
    // Whatever succeeded is released in `finally`, even if a sibling failed.
    if (claimed.status === "fulfilled") runner = claimed.value;
    if (tracked.status === "fulfilled") running = tracked.value;
    for (const part of [claimed, tracked]) if (part.status === "rejected") throw part.reason;
    const attemptNo = opened.failures + 1;
    ctx = {
      jobId,
      attempt: attemptNo,
      isFinalAttempt: attemptNo >= deps.attempts,
      signal: controller.signal,
      journal: opened.journal,
      markAnswered: async () => {
        await deps.journals.markFinal(jobId);
        answered = true;
      },
    };
    settled = await deps.process(message, ctx).then(
      (result) => ({ ok: true as const, result: result ?? "answered" }),
      (error: unknown) => ({ ok: false as const, error }),
    );
    cancelAtSettle = cancel;
  } finally {
    signal?.removeEventListener("abort", onBullAbort);
    // Both before the job is handed on (moveToWait / moveToDelayed below): the next run must not wait for this one.
    await Promise.all([
      running
        ?.release()
        .catch((error: unknown) => deps.log.warn({ jobId, err: errorSummary(error) }, "release failed")),
      runner
        ?.release()
        .catch((error: unknown) => deps.log.warn({ jobId, err: errorSummary(error) }, "runner release failed")),
    ]);
  }
  const end = decideEnd(settled, cancelAtSettle, ctx, deps.backoffMs);
  await settleWithBullmq(deps, { job, token, message, ctx, end, ms: Date.now() - startedAt, answered });
}

/** Maps an attempt's end to BullMQ and announces it (the outcome event goes out before the job is handed on). */
async function settleWithBullmq(
  deps: AttemptDeps,
  a: {
    job: Job;
    token: string | undefined;
    message: InboundMessage;
    ctx: JobContext;
    end: AttemptEnd;
    ms: number;
    answered: boolean;
  },
): Promise<void> {
  const { job, token, message, ctx, end, ms } = a;
  const jobId = ctx.jobId;
  const announce = (outcome: JobOutcomeEvent["outcome"], error?: unknown) =>
    deps.onOutcome({ outcome, jobId, attempt: ctx.attempt, message, ms, ...(error !== undefined ? { error } : {}) });
  switch (end.kind) {
    case "interrupted":
      announce("interrupted");
      // Not final: hand the job to another process now instead of waiting for the lock to expire.
      try {
        await job.moveToWait(token);
      } catch (error) {
        deps.log.warn(
          { jobId, err: errorSummary(error) },
          "could not move job back to wait; it will be recovered as stalled",
        );
      }
      deps.log.info({ jobId }, "job interrupted by shutdown, handed back to the queue");
      throw new WaitingError();
    case "retry":
      announce("failed", end.error);
      await deps.journals.recordFailure(jobId, ctx.attempt);
      deps.log.warn(
        { jobId, attempt: ctx.attempt, delay: end.delayMs, err: errorSummary(end.error) },
        "job failed, retrying",
      );
      await job.moveToDelayed(Date.now() + end.delayMs, token);
      throw new DelayedError();
    case "give-up":
      announce("given_up", end.error);
      deps.log.warn({ jobId, attempt: ctx.attempt, err: errorSummary(end.error) }, "job failed, giving up");
      await deps.giveUp(message, ctx, end.error);
      break;
    case "answered":
    case "stopped":
      announce(end.kind);
      break;
    default:
      assertNever(end);
  }
  if (!a.answered) await deps.journals.markFinal(jobId);
}
