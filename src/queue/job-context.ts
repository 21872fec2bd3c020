/**
 * What the queue runtime hands the caller's processor, and what the processor hands back: the
 * processor reports how the reply ended (or throws a failure), and the runtime alone decides what
 * that means for the job (retry, give up, hand over) and maps it to BullMQ.
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
  /**
   * Marks the reply complete: retries must not answer again. Call it right after the turn is in history,
   * so a crash between the two cannot append it twice (the runtime calls it itself when the processor did not).
   */
  markAnswered(): Promise<void>;
}

/**
 * How the processor's reply ended: complete, ended by /stop, or interrupted by shutdown (another process
 * continues it). Nothing returned counts as `answered`.
 */
export type ProcessResult = "answered" | "stopped" | "interrupted";

/**
 * Answers one message. Throw for failures: they are retried with backoff unless the error says
 * `retryable: false` (e.g. a ModelError for a request the server will never accept), which gives up at once
 * and reaches `onGiveUp` as it was thrown, code and all.
 */
export type MessageProcessor = (message: InboundMessage, ctx: JobContext) => Promise<ProcessResult | void>;

/** Runs once when a message is given up on (e.g. shows "model unavailable" in the reply). */
export type GiveUpHandler = (message: InboundMessage, ctx: JobContext, error: unknown) => Promise<void>;

/** Whether another attempt could help after `error`. */
export function isRetryable(error: unknown): boolean {
  if (error instanceof UnrecoverableError) return false;
  return (error as { retryable?: unknown } | null | undefined)?.retryable !== false;
}
