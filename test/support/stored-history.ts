/** Everything a deployment keeps in Redis history lists, as raw text (for "no picture bytes stored" checks). */
import type { TestRedis } from "./redis.js";

/** The raw elements of every history list under the test prefix. */
export async function storedHistoryText(redis: TestRedis): Promise<string> {
  const keys: string[] = [];
  let cursor = "0";
  do {
    const [next, found] = await redis.redis.scan(cursor, "MATCH", `${redis.prefix}:history:*`, "COUNT", 500);
    cursor = next;
    keys.push(...found);
  } while (cursor !== "0");
  const lists = await Promise.all(
    keys.map(async (k) => ((await redis.redis.type(k)) === "list" ? redis.redis.lrange(k, 0, -1) : [])),
  );
  return lists.flat().join("\n");
}
