/**
 * Discord-style rate-limit buckets for the fake: a fixed window that starts with the first
 * request after a reset (what X-RateLimit-Reset-After describes), keyed by bucket hash plus
 * the top-level resource (channel id), with the real header set on every answer.
 */

/** How many requests a bucket admits per window. */
export interface BucketRule {
  /** X-RateLimit-Bucket value (the same for every channel, as on Discord). */
  hash: string;
  limit: number;
  windowMs: number;
}

/** The verdict for one request: headers to send, and whether it was over the limit. */
export interface BucketVerdict {
  limited: boolean;
  /** Seconds until the window resets (what retry_after says on a 429). */
  resetAfterS: number;
  headers: Record<string, string>;
}

interface WindowState {
  count: number;
  resetAt: number;
}

/** A set of fixed-window buckets sharing one clock. */
export interface RateBuckets {
  /** Counts a request against `rule` for `major` (a channel id) and says whether it may pass. */
  take(rule: BucketRule, major: string): BucketVerdict;
  /** Forgets every window (e.g. between test phases). */
  reset(): void;
}

const seconds = (ms: number): string => (Math.max(0, ms) / 1000).toFixed(3);

/** Creates buckets reading time from `now`. */
export function createRateBuckets(now: () => number): RateBuckets {
  const windows = new Map<string, WindowState>();
  return {
    take(rule, major) {
      const key = `${rule.hash}:${major}`;
      const t = now();
      let state = windows.get(key);
      if (!state || t >= state.resetAt) {
        state = { count: 0, resetAt: t + rule.windowMs };
        windows.set(key, state);
      }
      const limited = state.count >= rule.limit;
      if (!limited) state.count += 1;
      const resetAfterMs = state.resetAt - t;
      return {
        limited,
        resetAfterS: resetAfterMs / 1000,
        headers: {
          "x-ratelimit-limit": String(rule.limit),
          "x-ratelimit-remaining": String(rule.limit - state.count),
          "x-ratelimit-reset": seconds(state.resetAt),
          "x-ratelimit-reset-after": seconds(resetAfterMs),
          "x-ratelimit-bucket": rule.hash,
        },
      };
    },
    reset() {
      windows.clear();
    },
  };
}
