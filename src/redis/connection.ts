/** Redis connections for the roles: checked once at start so a wrong REDIS_URL fails fast and clearly. */
import { Redis } from "ioredis";

/** Redis did not answer at start. */
export class RedisUnavailableError extends Error {
  override readonly name = "RedisUnavailableError";
}

/** Connection settings every long-lived client uses (BullMQ needs maxRetriesPerRequest null on blocking clients). */
export function redisOptions(): { maxRetriesPerRequest: null; enableReadyCheck: boolean } {
  return { maxRetriesPerRequest: null, enableReadyCheck: true };
}

/** Opens a client and proves Redis answers within `timeoutMs`; otherwise throws RedisUnavailableError. */
export async function connectRedis(url: string, timeoutMs = 5000): Promise<Redis> {
  const probe = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    connectTimeout: timeoutMs,
    retryStrategy: () => null,
  });
  let lastError: unknown;
  probe.on("error", (error: unknown) => {
    lastError = error;
  });
  try {
    await probe.connect();
    await probe.ping();
  } catch (error) {
    probe.disconnect();
    const reason = (lastError as Error | undefined)?.message ?? (error as Error).message;
    throw new RedisUnavailableError(
      `Redis does not answer at ${safeUrl(url)} (${reason}). Start Redis or set REDIS_URL.`,
    );
  }
  probe.disconnect();
  return new Redis(url, redisOptions());
}

/**
 * The URL as it may be shown in messages and logs: userinfo (`user:password@`) and every query value
 * (ioredis reads `?password=` too) replaced by `***`.
 */
export function safeUrl(url: string): string {
  try {
    const u = new URL(url);
    const query = u.search ? `?${[...u.searchParams.keys()].map((key) => `${key}=***`).join("&")}` : "";
    const auth = u.username || u.password ? "***@" : "";
    return `${u.protocol}//${auth}${u.host}${u.pathname}${query}`;
  } catch {
    return "(invalid URL)";
  }
}
