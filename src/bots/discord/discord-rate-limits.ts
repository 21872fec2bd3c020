/**
 * What Discord's X-RateLimit-* headers taught us: the even spacing that keeps a channel's message writes inside
 * their bucket. Whether a request would be refused right now is @discordjs/rest's business.
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

/** Learns from response headers how far apart message writes should be. */
export interface RateLimitTracker {
  /** Feeds one response (any status) into the model. */
  observe(method: string, path: string, headers: Headers): void;
  /** Even spacing (ms) of message sends/edits that stays inside the channel's buckets, once headers told us. */
  messageWriteIntervalMs(channelId: string): number | undefined;
}

const MESSAGE_WRITE_ROUTES = ["POST /channels/:id/messages", "PATCH /channels/:id/messages/:id"];

/** Creates an empty tracker (whether a request may go now is REST's bucket's business). */
export function createRateLimitTracker(): RateLimitTracker {
  // "POST /channels/:id/messages" → bucket hash (learned from X-RateLimit-Bucket).
  const hashes = new Map<string, string>();
  // hash or route → the bucket's rule (limit per window), learned when a fresh window opened.
  const rules = new Map<string, { limit: number; windowMs: number }>();

  const bucketOf = (method: string, route: string): string => hashes.get(`${method} ${route}`) ?? `${method} ${route}`;

  return {
    observe(method, path, headers) {
      const { route } = routeIdentity(path);
      const hash = headers.get("x-ratelimit-bucket");
      if (hash) hashes.set(`${method} ${route}`, hash);
      const limit = Number(headers.get("x-ratelimit-limit"));
      const remaining = Number(headers.get("x-ratelimit-remaining"));
      const resetAfterS = Number(headers.get("x-ratelimit-reset-after"));
      // The first request of a window leaves limit-1 and reports the whole window as reset-after.
      if (
        headers.has("x-ratelimit-limit") &&
        Number.isFinite(limit) &&
        limit > 0 &&
        remaining === limit - 1 &&
        Number.isFinite(resetAfterS) &&
        resetAfterS > 0
      ) {
        rules.set(bucketOf(method, route), { limit, windowMs: resetAfterS * 1000 });
      }
    },

    // Buckets are per channel but share one rule.
    messageWriteIntervalMs() {
      let interval: number | undefined;
      for (const routeKey of MESSAGE_WRITE_ROUTES) {
        const rule = rules.get(hashes.get(routeKey) ?? routeKey);
        if (!rule) continue;
        interval = Math.max(interval ?? 0, Math.ceil(rule.windowMs / rule.limit));
      }
      return interval;
    },
  };
}
