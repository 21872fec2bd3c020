/**
 * A grammY API transformer that waits out `429 Too Many Requests` (parameters.retry_after)
 * and repeats the call, a bounded number of times. The adapter's own short answers
 * (command replies, refusals) go through it; the reply port does not, because the reply
 * engine paces and retries those itself (a 429 there becomes RateLimitedError).
 */
import type { Transformer } from "grammy";
import { abortableSleep } from "../../shared/abortable-sleep.js";

/** Options of the transformer. */
export interface RetryAfterOptions {
  /** Calls in total, the first included. */
  maxAttempts: number;
  /** A retry_after longer than this is not waited out: the 429 is returned to the caller. */
  maxDelayMs: number;
  /** Methods left alone (getUpdates has its own retry loop in grammY). */
  skipMethods?: readonly string[];
  /** Injected for tests; resolves after `ms` or rejects when `signal` aborts. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/** Creates the transformer; install it with `api.config.use(...)`. */
export function retryAfterTransformer(opts: RetryAfterOptions): Transformer {
  const skip = new Set(opts.skipMethods ?? []);
  const sleep = opts.sleep ?? abortableSleep;
  return async (prev, method, payload, signal) => {
    let result = await prev(method, payload, signal);
    for (let attempt = 1; attempt < opts.maxAttempts && !skip.has(method); attempt++) {
      if (result.ok || result.error_code !== 429) break;
      const waitMs = (result.parameters?.retry_after ?? 1) * 1000;
      if (waitMs > opts.maxDelayMs) break;
      // grammY types signals with its abort-controller polyfill; at runtime it is the standard AbortSignal.
      await sleep(waitMs, signal as unknown as AbortSignal | undefined);
      result = await prev(method, payload, signal);
    }
    return result;
  };
}
