/**
 * The labels of chatbot_platform_requests_total. Each adapter meters its own HTTP client, so the count says
 * what really reached the platform: a 429 is `rate_limited` only when the platform answered it.
 */
import type { Metrics } from "./metrics.js";

/** What a request did, as chatbot_platform_requests_total's `kind` label says it. */
export type PlatformRequestKind = "send" | "edit" | "draft" | "typing" | "other";

/** How a request ended: answered fine, refused with 429, any other refusal or network failure, or cancelled by us. */
export type PlatformRequestOutcome = "ok" | "rate_limited" | "error" | "aborted";

/** The counter a meter increments. */
export type PlatformRequestCounter = Pick<Metrics, "platformRequests">;

/** Cancelled by us (/stop, shutdown); a request that timed out is an error of the platform's. */
export function failureOutcome(signal: AbortSignal | null | undefined): PlatformRequestOutcome {
  return signal?.aborted && (signal.reason as Error | undefined)?.name !== "TimeoutError" ? "aborted" : "error";
}

/** The outcome of an answered request, from its HTTP-like status. */
export function answeredOutcome(ok: boolean, status: number | undefined): PlatformRequestOutcome {
  return ok ? "ok" : status === 429 ? "rate_limited" : "error";
}
