/** How one job attempt ended, decided once by the queue runtime and announced to logs and metrics. */
import type { InboundMessage } from "./inbound-message.js";

/**
 * `stopped`: by /stop (what was written stays); `interrupted`: by shutdown, another process continues;
 * `failed`: will be retried; `given_up`: no more attempts, the user was told.
 */
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
