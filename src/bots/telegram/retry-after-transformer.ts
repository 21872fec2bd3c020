/**
 * A grammY API transformer that waits out `429 Too Many Requests` (retry_after) and repeats the call.
 * Only the adapter's own short answers use it: the reply engine paces and retries the reply port's calls.
 */
import type { Transformer } from "grammy";
import { abortableSleep } from "../../shared/abortable-sleep.js";

/** Creates the transformer: `maxAttempts` calls in all, a retry_after over `maxDelayMs` returned as is. */
export function retryAfterTransformer(opts: {
  maxAttempts: number;
  maxDelayMs: number;
  skipMethods: readonly string[];
}): Transformer {
  return async (prev, method, payload, signal) => {
    let result = await prev(method, payload, signal);
    for (let attempt = 1; attempt < opts.maxAttempts && !opts.skipMethods.includes(method); attempt++) {
      if (result.ok || result.error_code !== 429) break;
      const waitMs = (result.parameters?.retry_after ?? 1) * 1000;
      if (waitMs > opts.maxDelayMs) break;
      // grammY types signals with its abort-controller polyfill; at runtime it is the standard AbortSignal.
      await abortableSleep(waitMs, signal as unknown as AbortSignal | undefined);
      result = await prev(method, payload, signal);
    }
    return result;
  };
}
