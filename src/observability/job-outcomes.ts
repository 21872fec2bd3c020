/**
 * One structured log line and one chatbot_jobs_total count per job outcome. Wraps
 * the queue's processor and give-up handler (the worker role installs it), and
 * reads the outcome the way src/queue/message-worker.ts decides it:
 *   answered     the reply is complete                                   → jobs{outcome="done"}
 *   stopped      /stop ended it (what was written stays)                 → jobs{outcome="cancelled"}
 *   interrupted  shutdown aborted it; another process continues the reply → jobs{outcome="interrupted"}
 *   failed       this attempt failed and will be retried                  → jobs{outcome="retried"}
 *   given_up     no more attempts; the user was told                     → jobs{outcome="failed"}
 * Each line carries jobId, conversation, platform, attempt, outcome, ms (this
 * attempt's time) and totalMs (since the message arrived); errors go in `err`,
 * where the logger's redaction applies.
 */
import { UnrecoverableError } from "bullmq";
import type { Logger } from "./logger.js";
import type { Metrics } from "./metrics.js";
import { cancelKindOf } from "../queue/cancel-bus.js";
import type { InboundMessage } from "../contracts/inbound-message.js";
import type { GiveUpHandler, JobContext, MessageProcessor } from "../queue/message-worker.js";

/** What happened to one job attempt. */
export type JobOutcome = "answered" | "stopped" | "interrupted" | "failed" | "given_up";

const JOB_COUNTER_LABEL: Record<JobOutcome, string> = {
  answered: "done",
  stopped: "cancelled",
  interrupted: "interrupted",
  failed: "retried",
  given_up: "failed",
};

/** Wrappers that record job outcomes around the processor and the give-up handler. */
export interface JobOutcomes {
  observe(process: MessageProcessor): MessageProcessor;
  observeGiveUp(onGiveUp: GiveUpHandler): GiveUpHandler;
}

/** Creates the recorder; `now` is injectable for tests. */
export function createJobOutcomes(deps: { logger: Logger; metrics: Pick<Metrics, "jobs">; now?: () => number }): JobOutcomes {
  const now = deps.now ?? Date.now;
  // Attempts whose failure ends in a give-up: that line reports how long the last attempt took.
  const lastAttemptMs = new Map<string, number>();

  function record(outcome: JobOutcome, message: InboundMessage, ctx: JobContext, ms: number | undefined, error?: unknown): void {
    deps.metrics.jobs.inc({ outcome: JOB_COUNTER_LABEL[outcome] });
    const line = {
      jobId: ctx.jobId,
      conversation: message.conversationKey,
      platform: message.platform,
      attempt: ctx.attempt,
      outcome,
      ...(ms !== undefined ? { ms } : {}),
      totalMs: now() - message.receivedAt,
      ...(error !== undefined ? { err: error } : {}),
    };
    if (outcome === "failed" || outcome === "given_up") deps.logger.warn(line, "job outcome");
    else deps.logger.info(line, "job outcome");
  }

  return {
    observe(process) {
      return async (message, ctx) => {
        const startedAt = now();
        try {
          await process(message, ctx);
        } catch (error) {
          const kind = cancelKindOf(ctx.signal);
          if (kind === "shutdown") record("interrupted", message, ctx, now() - startedAt);
          else if (kind === "stop") record("stopped", message, ctx, now() - startedAt);
          else if (ctx.isFinalAttempt || error instanceof UnrecoverableError) lastAttemptMs.set(ctx.jobId, now() - startedAt);
          else record("failed", message, ctx, now() - startedAt, error);
          throw error;
        }
        const kind = cancelKindOf(ctx.signal);
        record(kind === "shutdown" ? "interrupted" : kind === "stop" ? "stopped" : "answered", message, ctx, now() - startedAt);
      };
    },
    observeGiveUp(onGiveUp) {
      return async (message, ctx, error) => {
        const ms = lastAttemptMs.get(ctx.jobId);
        lastAttemptMs.delete(ctx.jobId);
        record("given_up", message, ctx, ms, error);
        await onGiveUp(message, ctx, error);
      };
    },
  };
}
