/**
 * How one job attempt ended, decided once by the queue runtime and announced as one event that the
 * logs and metrics subscribe to:
 *   answered     the reply is complete
 *   stopped      /stop ended it (what was written stays)
 *   interrupted  shutdown aborted it; another process continues the reply
 *   failed       this attempt failed and will be retried
 *   given_up     no more attempts; the user was told
 */
import type { InboundMessage } from "./inbound-message.js";

/** What happened to one job attempt. */
export type JobOutcome = "answered" | "stopped" | "interrupted" | "failed" | "given_up";

/** One job attempt's end. */
export interface JobOutcomeEvent {
  outcome: JobOutcome;
  jobId: string;
  /** 1 for the first try; a stalled-and-recovered job keeps its number. */
  attempt: number;
  message: InboundMessage;
  /** How long the attempt ran (absent for a job given up on without running, e.g. failed in the queue). */
  ms?: number;
  /** Why it failed (`failed`, `given_up`). */
  error?: unknown;
}
