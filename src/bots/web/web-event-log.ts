/**
 * A web conversation's events in a Redis Stream, appended by any process, read back after a reload and followed
 * live with a blocking XREAD on a connection of the reader's own. Capped and expiring like the history.
 */
import type { Redis } from "ioredis";
import { webKeys } from "../../redis/keys.js";
import type { WebEvent } from "./web-events.js";

/** Events kept per conversation (about a hundred answers with their tokens); older ones are trimmed. */
const MAX_STREAM_EVENTS = 20_000;

/** One stored event and its stream id (the SSE `id:`, so a reconnect resumes after it). */
export interface StoredWebEvent {
  id: string;
  event: WebEvent;
}

/** Appends to and reads a deployment's web conversation streams. */
export interface WebEventLog {
  /** Appends an event; `keepAlive` also renews the stream's expiry (done on turn boundaries, not per token). */
  append(conversationKey: string, event: WebEvent, opts?: { keepAlive?: boolean }): Promise<string>;
  /** Events after `afterId` ("0" = from the start), oldest first, at most `count`. */
  read(conversationKey: string, afterId: string, count?: number): Promise<StoredWebEvent[]>;
  /** Waits up to `blockMs` for events after `afterId` on `reader` (a connection that does nothing else). */
  follow(reader: Redis, conversationKey: string, afterId: string, blockMs: number): Promise<StoredWebEvent[]>;
  /** Deletes the conversation's stream (`/reset`). */
  clear(conversationKey: string): Promise<void>;
}

function decode(entries: [string, string[]][] | null | undefined): StoredWebEvent[] {
  const out: StoredWebEvent[] = [];
  for (const [id, fields] of entries ?? []) {
    const raw = fields[fields.indexOf("e") + 1];
    if (raw === undefined) continue;
    try {
      out.push({ id, event: JSON.parse(raw) as WebEvent });
    } catch {
      // Written by another version: skipped, the rest of the conversation still shows.
    }
  }
  return out;
}

/** Creates the log under KEY_PREFIX; `ttlSeconds` is the conversation's expiry (HISTORY_TTL_SECONDS). */
export function createWebEventLog(deps: { redis: Redis; prefix: string; ttlSeconds: number }): WebEventLog {
  const keys = webKeys(deps.prefix);
  return {
    async append(ck, event, opts = {}) {
      const key = keys.events(ck);
      const add = ["MAXLEN", "~", MAX_STREAM_EVENTS, "*", "e", JSON.stringify(event)] as const;
      if (!opts.keepAlive) return (await deps.redis.xadd(key, ...add)) as string;
      const results = await deps.redis
        .multi()
        .xadd(key, ...add)
        .expire(key, deps.ttlSeconds)
        .exec();
      const [error, id] = results?.[0] ?? [new Error("transaction aborted"), undefined];
      if (error) throw error;
      return id as string;
    },
    async read(ck, afterId, count = 5000) {
      const start = afterId === "0" ? "-" : `(${afterId}`;
      return decode((await deps.redis.xrange(keys.events(ck), start, "+", "COUNT", count)) as [string, string[]][]);
    },
    async follow(reader, ck, afterId, blockMs) {
      const result = (await reader.xread("COUNT", 500, "BLOCK", blockMs, "STREAMS", keys.events(ck), afterId)) as
        | [string, [string, string[]][]][]
        | null;
      return decode(result?.[0]?.[1]);
    },
    async clear(ck) {
      await deps.redis.del(keys.events(ck));
    },
  };
}
