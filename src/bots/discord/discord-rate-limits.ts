/**
 * What Discord's X-RateLimit-* headers taught us, per bucket and top-level resource (channel):
 * whether a request would be refused right now, and the even spacing that keeps message
 * writes in a channel inside their bucket (the reply editor paces with it instead of a
 * hard-coded 5-per-5-s).
 */

/** A REST path reduced to Discord's rate-limit identity: the route shape and its top-level id. */
export interface RouteIdentity {
  /** "/channels/:id/messages/:id" */
  route: string;
  /** The top-level resource id (channel, guild or webhook), "" when none. */
  major: string;
}

/** Reduces `/channels/123/messages/456` to `{ route: "/channels/:id/messages/:id", major: "123" }`. */
export function routeIdentity(path: string): RouteIdentity {
  const parts = path.split("?")[0]!.split("/").filter(Boolean);
  const topLevel = parts[0] === "channels" || parts[0] === "guilds" || parts[0] === "webhooks";
  const major = topLevel && parts[1] ? parts[1] : "";
  const shaped = parts.map((part, i) => {
    if (/^\d{5,}$/.test(part)) return ":id";
    // Webhook and interaction tokens are secrets: never part of a key that might be logged.
    if ((parts[0] === "webhooks" || parts[0] === "interactions") && i === 2) return ":token";
    return part;
  });
  return { route: `/${shaped.join("/")}`, major };
}

interface BucketState {
  limit: number;
  remaining: number;
  resetAt: number;
}

/** Learns from response headers; answers "may I send now?" and "how far apart should writes be?". */
export interface RateLimitTracker {
  /** Milliseconds until a request on this route may be sent without a 429 (0 = now, as far as we know). */
  waitMs(method: string, path: string): number;
  /** Feeds one response (any status) into the model. `retryAfterMs` is set for a 429. */
  observe(method: string, path: string, headers: Headers, retryAfterMs?: number): void;
  /** Even spacing (ms) of message sends/edits that stays inside the channel's buckets, once headers told us. */
  messageWriteIntervalMs(channelId: string): number | undefined;
}

const MESSAGE_WRITE_ROUTES = ["POST /channels/:id/messages", "PATCH /channels/:id/messages/:id"];

/** Creates an empty tracker reading time from `now`. */
export function createRateLimitTracker(now: () => number = Date.now): RateLimitTracker {
  // "POST /channels/:id/messages" → bucket hash (learned from X-RateLimit-Bucket).
  const hashes = new Map<string, string>();
  // `${hash or route}:${major}` → last known window state.
  const states = new Map<string, BucketState>();
  // hash or route → the bucket's rule (limit per window), learned when a fresh window opened.
  const rules = new Map<string, { limit: number; windowMs: number }>();
  let globalResetAt = 0;

  const bucketOf = (method: string, route: string): string => hashes.get(`${method} ${route}`) ?? `${method} ${route}`;

  return {
    waitMs(method, path) {
      const t = now();
      const { route, major } = routeIdentity(path);
      const state = states.get(`${bucketOf(method, route)}:${major}`);
      const local = state && state.remaining <= 0 && state.resetAt > t ? state.resetAt - t : 0;
      return Math.max(local, globalResetAt > t ? globalResetAt - t : 0);
    },

    observe(method, path, headers, retryAfterMs) {
      const t = now();
      const { route, major } = routeIdentity(path);
      const hash = headers.get("x-ratelimit-bucket");
      if (hash) hashes.set(`${method} ${route}`, hash);
      const bucket = bucketOf(method, route);
      const key = `${bucket}:${major}`;
      if (retryAfterMs !== undefined && headers.get("x-ratelimit-global")) {
        globalResetAt = t + retryAfterMs;
        return;
      }
      const limit = Number(headers.get("x-ratelimit-limit"));
      const remaining = Number(headers.get("x-ratelimit-remaining"));
      const resetAfterS = Number(headers.get("x-ratelimit-reset-after"));
      if (states.size > 2000) {
        // A long-lived worker sees many channels: forget windows that are over.
        for (const [k, s] of states) if (s.resetAt <= t) states.delete(k);
      }
      if (
        headers.has("x-ratelimit-limit") &&
        Number.isFinite(limit) &&
        limit > 0 &&
        Number.isFinite(remaining) &&
        Number.isFinite(resetAfterS)
      ) {
        states.set(key, { limit, remaining, resetAt: t + resetAfterS * 1000 });
        // The first request of a window leaves limit-1 and reports the whole window as reset-after.
        if (remaining === limit - 1 && resetAfterS > 0) rules.set(bucket, { limit, windowMs: resetAfterS * 1000 });
      }
      if (retryAfterMs !== undefined) {
        const previous = states.get(key);
        states.set(key, {
          limit: previous?.limit ?? 1,
          remaining: 0,
          resetAt: Math.max(previous?.resetAt ?? 0, t + retryAfterMs),
        });
      }
    },

    messageWriteIntervalMs(channelId) {
      void channelId; // Buckets are per channel but share one rule; the id keeps the question honest.
      let interval: number | undefined;
      for (const routeKey of MESSAGE_WRITE_ROUTES) {
        const rule = rules.get(hashes.get(routeKey) ?? routeKey);
        if (!rule) continue;
        const spacing = Math.ceil(rule.windowMs / rule.limit);
        interval = Math.max(interval ?? 0, spacing);
      }
      return interval;
    },
  };
}
