/** Whether a Redis answers PING at `url` (one attempt, no retries): for set-up code deciding what to start. */
import { Redis } from "ioredis";

/** Resolves true when PONG comes back within `connectTimeoutMs`. */
export async function redisAnswers(url: string, connectTimeoutMs = 1500): Promise<boolean> {
  const client = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: connectTimeoutMs,
  });
  client.on("error", () => undefined);
  try {
    await client.connect();
    return (await client.ping()) === "PONG";
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}
