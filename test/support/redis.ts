/** Per-test Redis isolation: a unique key prefix and a cleanup that deletes everything under it. */
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { inject } from "vitest";

export interface TestRedis {
  url: string;
  /** Unique per call; use it as KEY_PREFIX. */
  prefix: string;
  /** A connection for assertions; closed by cleanup. */
  redis: Redis;
  /** Deletes every key under the prefix and closes the connection. */
  cleanup(): Promise<void>;
}

/** Opens a connection to the test Redis with a fresh prefix. */
export function createTestRedis(label = "t"): TestRedis {
  const url = inject("redisUrl");
  const prefix = `test-${label}-${randomBytes(4).toString("hex")}`;
  const redis = new Redis(url, { maxRetriesPerRequest: 3 });
  return {
    url,
    prefix,
    redis,
    async cleanup() {
      let cursor = "0";
      do {
        const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 500);
        cursor = next;
        if (keys.length) await redis.del(...keys);
      } while (cursor !== "0");
      redis.disconnect();
    },
  };
}
