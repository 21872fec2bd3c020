/** Where messages enter the queue: the per-user rate limit (counted in Redis, shared by all adapters) and metrics. */
import type { Redis } from "ioredis";
import { redisScript } from "../redis/script.js";
import type { BotGateway, EnqueueResult } from "../contracts/bot-gateway.js";
import type { Metrics } from "../observability/metrics.js";
import { outsiderRefusalKey, userRateKey } from "../redis/keys.js";

/** Refusals an outsider (not on the allow lists) is told per minute. */
const OUTSIDER_REFUSALS_PER_MINUTE = 1;

// KEYS: the user's counter for this minute. ARGV: its lifetime (s), given once by the SET that creates it.
const COUNT = redisScript(`
if redis.call('SET', KEYS[1], '1', 'NX', 'EX', ARGV[1]) then return 1 end
return redis.call('INCR', KEYS[1])
`);

/** Options of the limiting gateway. */
export interface LimitedGatewayOptions {
  inner: BotGateway;
  redis: Redis;
  prefix: string;
  /** Messages per user per minute. */
  perUserPerMinute: number;
  metrics?: Metrics;
  now?: () => number;
}

/** Wraps a gateway with the per-user rate limit; refusals carry a polite text for the user. */
export function createLimitedGateway(opts: LimitedGatewayOptions): BotGateway {
  const now = opts.now ?? Date.now;
  // A fixed one-minute window: one round trip.
  const countOf = async (key: string): Promise<number> => Number(await COUNT.run(opts.redis, [key], [120]));
  return {
    async enqueue(message): Promise<EnqueueResult> {
      const minute = Math.floor(now() / 60_000);
      const count = await countOf(userRateKey(opts.prefix, message.platform, message.author.id, minute));
      if (count > opts.perUserPerMinute) {
        opts.metrics?.messagesIn.inc({ platform: message.platform, outcome: "rate_limited" });
        // Told once per window: answering every message of a flood would spend the chat's send budget
        // (which the answers streaming there need) on refusals, doing the flooder's work for them.
        if (count > opts.perUserPerMinute + 1) return { status: "refused" };
        const wait = 60 - Math.floor((now() % 60_000) / 1000);
        return {
          status: "refused",
          reason: `You are sending messages faster than I can answer — please wait about ${wait} s and try again.`,
        };
      }
      const result = await opts.inner.enqueue(message);
      opts.metrics?.messagesIn.inc({ platform: message.platform, outcome: result.status });
      return result;
    },
    async mayReply(platform, userId, { outsider = false } = {}) {
      const minute = Math.floor(now() / 60_000);
      try {
        if (outsider)
          return (
            (await countOf(outsiderRefusalKey(opts.prefix, platform, userId, minute))) <= OUTSIDER_REFUSALS_PER_MINUTE
          );
        // A courtesy reply answers a message: it counts like one, and past the limit the user hears nothing more.
        const allowed = (await countOf(userRateKey(opts.prefix, platform, userId, minute))) <= opts.perUserPerMinute;
        if (!allowed) opts.metrics?.messagesIn.inc({ platform, outcome: "rate_limited" });
        return allowed;
      } catch {
        // Redis is unreachable: the reply (often "try again later") still goes out; the send budget's own
        // pacing (replySlot) and the platform's limits still hold.
        return true;
      }
    },
    reset: (key) => opts.inner.reset(key),
    stop: (key) => opts.inner.stop(key),
    ...(opts.inner.compact ? { compact: opts.inner.compact.bind(opts.inner) } : {}),
    ...(opts.inner.replySlot ? { replySlot: opts.inner.replySlot.bind(opts.inner) } : {}),
  };
}
