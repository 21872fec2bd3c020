/**
 * A Lua script run with EVALSHA, falling back to EVAL when Redis does not know it (first use, after a restart).
 * Unlike ioredis' defineCommand it does not mutate a connection the caller owns.
 */
import { createHash } from "node:crypto";
import type { Redis } from "ioredis";

/** A script bound to its source; `run` works on any connection. */
export interface RedisScript {
  run(redis: Redis, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown>;
}

/** Wraps Lua source as a script (its KEYS must be listed in `keys`, so it stays cluster-safe). */
export function redisScript(source: string): RedisScript {
  const sha = createHash("sha1").update(source).digest("hex");
  return {
    async run(redis, keys, args) {
      try {
        return await redis.evalsha(sha, keys.length, ...keys, ...args);
      } catch (error) {
        if (!(error instanceof Error) || !error.message.includes("NOSCRIPT")) throw error;
        return redis.eval(source, keys.length, ...keys, ...args);
      }
    },
  };
}
