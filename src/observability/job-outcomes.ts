/**
 * One log line and one chatbot_jobs_total count per job outcome the queue runtime announces. `ms` is
 * this attempt's time, `totalMs` the time since the message arrived; errors go in `err`, which the logger redacts.
 */
import type { JobOutcome, JobOutcomeEvent } from "../contracts/job-outcome.js";
import type { Logger } from "./logger.js";
import type { Metrics } from "./metrics.js";

// "failed" here means it will be retried; given_up is the real failure.
const JOB_COUNTER_LABEL: Record<JobOutcome, string> = {
  answered: "done",
  stopped: "cancelled",
  interrupted: "interrupted",
  failed: "retried",
  given_up: "failed",
};

/** Creates the recorder the queue runtime's `onOutcome` calls; `now` is injectable for tests. */
export function createJobOutcomes(deps: {
  logger: Logger;
  metrics: Pick<Metrics, "jobs">;
  now?: () => number;
}): (event: JobOutcomeEvent) => void {
  const now = deps.now ?? Date.now;
  return ({ outcome, jobId, attempt, message, ms, error }) => {
    deps.metrics.jobs.inc({ outcome: JOB_COUNTER_LABEL[outcome] });
    const line = {
      jobId,
      conversation: message.conversationKey,
      platform: message.platform,
      attempt,
      outcome,
      ...(ms !== undefined ? { ms } : {}),
      totalMs: now() - message.receivedAt,
      ...(error !== undefined ? { err: error } : {}),
    };
    if (outcome === "failed" || outcome === "given_up") deps.logger.warn(line, "job outcome");
    else deps.logger.info(line, "job outcome");
  };
}
