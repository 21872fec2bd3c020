/**
 * Redis checks: it answers, keeps data across a restart, and never evicts keys (BullMQ's vanishing means lost
 * or doubled answers). Reads INFO rather than CONFIG where it can: managed Redis often disables CONFIG.
 */
import { Redis } from "ioredis";
import { findingsOf, type SetupFinding } from "../contracts/setup-finding.js";
import { safeUrl } from "../redis/connection.js";

const f = findingsOf("Redis");

/** Parses an INFO section into field → value. */
function infoFields(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    const at = line.indexOf(":");
    if (at > 0 && !line.startsWith("#")) out.set(line.slice(0, at), line.slice(at + 1).trim());
  }
  return out;
}

/**
 * Opens a connection that fails fast instead of retrying. ioredis's console warning about an unasked-for
 * password becomes `unaskedPassword`, said in a finding, so the output stays one line per check.
 */
async function openProbe(url: string, timeoutMs: number): Promise<{ redis: Redis; unaskedPassword: boolean }> {
  const redis = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    connectTimeout: timeoutMs,
    retryStrategy: () => null,
    commandTimeout: timeoutMs,
  });
  let lastError: Error | undefined;
  redis.on("error", (error: Error) => (lastError = error));
  let unaskedPassword = false;
  const warn = console.warn;
  console.warn = (...args: unknown[]) => {
    if (/does not require a password/.test(String(args[0]))) unaskedPassword = true;
    else warn(...args);
  };
  try {
    await redis.connect();
    await redis.ping();
    return { redis, unaskedPassword };
  } catch (error) {
    redis.disconnect();
    throw lastError ?? error;
  } finally {
    console.warn = warn;
  }
}

/** Persistence: AOF, or at least RDB snapshots; none means a restart loses every queued message and all history. */
async function checkPersistence(redis: Redis): Promise<SetupFinding> {
  const persistence = infoFields(await redis.info("persistence"));
  if (persistence.get("aof_enabled") === "1")
    return f.pass("persistence", "appendonly is on: queued messages and history survive a restart");
  const save = await (redis.config("GET", "save") as Promise<string[]>).then(
    (r) => r[1] ?? "",
    () => undefined,
  );
  if (save)
    return f.pass(
      "persistence",
      `RDB snapshots only (save "${save}"): a crash loses the writes since the last snapshot`,
    );
  return f.fail(
    "persistence",
    save === undefined
      ? "appendonly is off and the snapshot schedule cannot be read (CONFIG is disabled)"
      : "Redis keeps nothing on disk: a restart loses every queued message and all history",
    "start redis-server with --appendonly yes (or run CONFIG SET appendonly yes, then CONFIG REWRITE)",
  );
}

/** Eviction: only `noeviction` keeps BullMQ's keys from being deleted under memory pressure. */
async function checkEviction(redis: Redis): Promise<SetupFinding> {
  const policy = infoFields(await redis.info("memory")).get("maxmemory_policy") ?? "unknown";
  if (policy === "noeviction")
    return f.pass("eviction", "maxmemory-policy is noeviction: queue keys are never deleted to make room");
  return f.fail(
    "eviction",
    `maxmemory-policy is ${policy}: when memory runs short Redis deletes queue and lock keys (lost or doubled answers)`,
    "start redis-server with --maxmemory-policy noeviction (or run CONFIG SET maxmemory-policy noeviction, then CONFIG REWRITE)",
  );
}

/** Runs the Redis checks against REDIS_URL; later checks are skipped when Redis does not answer. */
export async function checkRedis(url: string, timeoutMs = 3000): Promise<SetupFinding[]> {
  let redis: Redis;
  let unaskedPassword: boolean;
  try {
    ({ redis, unaskedPassword } = await openProbe(url, timeoutMs));
  } catch (error) {
    return [
      f.fail(
        "answers",
        `no Redis answers at ${safeUrl(url)} (${(error as Error).message})`,
        "start Redis (redis-server, or docker compose up -d redis) or set REDIS_URL; `npm run chat` starts a private one by itself",
      ),
    ];
  }
  try {
    const server = infoFields(await redis.info("server"));
    return [
      f.pass(
        "answers",
        `Redis ${server.get("redis_version") ?? "?"} answers at ${safeUrl(url)}${unaskedPassword ? " (it asks for no password: the one in REDIS_URL is ignored)" : ""}`,
      ),
      await checkPersistence(redis),
      await checkEviction(redis),
    ];
  } finally {
    redis.disconnect();
  }
}
