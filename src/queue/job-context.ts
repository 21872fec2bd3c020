/**
 * What the queue runtime hands the caller's processor and what it hands back: the processor reports how the
 * reply ended (or throws), and the runtime alone decides what that means for the job.
 */
import { UnrecoverableError } from "bullmq";
import type { InboundMessage } from "../contracts/inbound-message.js";
import type { ReplyJournal } from "../contracts/reply-journal.js";

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
  /** Marks the reply complete; call it right after the turn is in history, so a crash cannot append it twice. */
  markAnswered(): Promise<void>;
}

/** How the reply ended; `interrupted`: by shutdown, another process continues it. Nothing returned: `answered`. */
export type ProcessResult = "answered" | "stopped" | "interrupted";

/** Answers one message; a thrown error is retried with backoff unless it says `retryable: false` (then given up on). */
export type MessageProcessor = (message: InboundMessage, ctx: JobContext) => Promise<ProcessResult | void>;

/** Runs once when a message is given up on (e.g. shows "model unavailable" in the reply). */
export type GiveUpHandler = (message: InboundMessage, ctx: JobContext, error: unknown) => Promise<void>;

/** Whether another attempt could help after `error`. */
export function isRetryable(error: unknown): boolean {
  if (error instanceof UnrecoverableError) return false;
  return (error as { retryable?: unknown } | null | undefined)?.retryable !== false;
}
