/**
 * /stop across processes: the process answering a conversation sets `P:running:<key>` = job id (short TTL,
 * refreshed, so a killed worker's marker vanishes) and listens on `P:cancel`; `stop(key)` checks the marker
 * and publishes, and whichever process runs that job aborts it.
 */
import type { Redis } from "ioredis";
import { queueKeys } from "../redis/keys.js";
import { redisScript } from "../redis/script.js";

/** Why a job's signal was aborted: the user's /stop, or this worker shutting down (retried elsewhere). */
export type CancelKind = "stop" | "shutdown";

/** The `reason` of an aborted job signal. */
export class JobCancelledError extends Error {
  override readonly name = "JobCancelledError";
  constructor(readonly kind: CancelKind) {
    super(kind === "stop" ? "stopped by the user" : "worker shutting down");
  }
}

/** Tells why a signal was aborted by the worker runtime, if it was. */
export function cancelKindOf(signal: AbortSignal): CancelKind | undefined {
  return signal.aborted && signal.reason instanceof JobCancelledError ? signal.reason.kind : undefined;
}

/** Default lifetime of a running marker (refreshed every third of it). */
export const DEFAULT_RUNNING_TTL_MS = 15_000;

// KEYS: running. ARGV: jobId. Deletes the marker only if it is still ours.
const RELEASE = redisScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`);

/** A job registered as running on this process. */
export interface RunningJob {
  /** Clears the marker and stops listening for this job. */
  release(): Promise<void>;
}

/** The cancel bus of one deployment. */
export interface CancelBus {
  /** Cancels the answer in flight in this conversation, on whichever process runs it; true if one was running. */
  stop(conversationKey: string): Promise<boolean>;
  /** Worker side: marks `jobId` as running here; `onStop` runs when a /stop for its conversation arrives. */
  track(conversationKey: string, jobId: string, onStop: () => void): Promise<RunningJob>;
  /** Stops listening and clears timers (the connection passed in stays open). */
  close(): Promise<void>;
}

interface Tracked {
  conversationKey: string;
  jobId: string;
  onStop: () => void;
  refresh?: NodeJS.Timeout;
}

/** Creates the bus over `redis`; its subscriber (`subscriber()`, else a duplicate) opens on first `track`. */
export function createCancelBus(opts: {
  redis: Redis;
  prefix: string;
  runningTtlMs?: number;
  subscriber?: () => Redis;
  onError?: (error: unknown) => void;
}): CancelBus {
  const keys = queueKeys(opts.prefix);
  const ttl = opts.runningTtlMs ?? DEFAULT_RUNNING_TTL_MS;
  const channel = keys.cancelChannel();
  const onError = opts.onError ?? (() => undefined);
  const tracked = new Set<Tracked>();
  let sub: Redis | undefined;
  let subscribed: Promise<void> | undefined;
  let closed = false;

  function deliver(raw: string): void {
    let request: { conversationKey?: unknown; jobId?: unknown };
    try {
      request = JSON.parse(raw) as typeof request;
    } catch {
      return;
    }
    for (const t of tracked) {
      if (t.conversationKey !== request.conversationKey) continue;
      if (typeof request.jobId === "string" && request.jobId !== t.jobId) continue;
      t.onStop();
    }
  }

  function ensureSubscribed(): Promise<void> {
    subscribed ??= (async () => {
      sub = opts.subscriber ? opts.subscriber() : opts.redis.duplicate();
      sub.on("error", onError);
      sub.on("message", (ch: string, message: string) => {
        if (ch === channel) deliver(message);
      });
      await sub.subscribe(channel);
    })();
    return subscribed;
  }

  return {
    async stop(conversationKey) {
      const jobId = await opts.redis.get(keys.running(conversationKey));
      if (!jobId) return false;
      await opts.redis.publish(channel, JSON.stringify({ conversationKey, jobId }));
      return true;
    },

    async track(conversationKey, jobId, onStop) {
      if (closed) throw new Error("cancel bus is closed");
      // Subscribe before announcing the marker, so a /stop that sees the marker is always heard.
      await ensureSubscribed();
      const entry: Tracked = { conversationKey, jobId, onStop };
      tracked.add(entry);
      const key = keys.running(conversationKey);
      await opts.redis.set(key, jobId, "PX", ttl);
      entry.refresh = setInterval(
        () => {
          opts.redis.set(key, jobId, "PX", ttl).catch(onError);
        },
        Math.max(50, Math.floor(ttl / 3)),
      );
      entry.refresh.unref();
      let released = false;
      return {
        async release() {
          if (released) return;
          released = true;
          clearInterval(entry.refresh);
          tracked.delete(entry);
          await RELEASE.run(opts.redis, [key], [jobId]);
        },
      };
    },

    async close() {
      closed = true;
      for (const t of tracked) clearInterval(t.refresh);
      tracked.clear();
      if (subscribed) await subscribed.catch(() => undefined);
      await sub?.quit().catch(() => sub?.disconnect());
    },
  };
}
