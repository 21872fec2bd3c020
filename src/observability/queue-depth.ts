/**
 * Reads chatbot_queue_depth. BullMQ holds only the head message of each conversation (queue/conversation-order.ts),
 * so its counts hide a burst inside one conversation: "unanswered" adds up the conversations' order lists.
 */
import { Queue } from "bullmq";
import type { Redis } from "ioredis";
import { QUEUE_NAME, queueKeys } from "../redis/keys.js";
import type { QueueDepthState } from "./metrics.js";

/** A depth reader over a caller-owned Redis connection. */
export interface QueueDepthSource {
  read(): Promise<Record<QueueDepthState, number>>;
  /** Closes the BullMQ handle (not the connection). */
  close(): Promise<void>;
}

// SSCAN page size: a scrape touches the pending set in bounded steps, one pipeline per page.
const PAGE = 500;

/** Creates the reader for the queue of `prefix` (KEY_PREFIX). */
export function createQueueDepthSource(opts: { redis: Redis; prefix: string }): QueueDepthSource {
  const keys = queueKeys(opts.prefix);
  const queue = new Queue(QUEUE_NAME, { connection: opts.redis, prefix: opts.prefix });
  // Failures surface through read(); the listener keeps EventEmitter from throwing.
  queue.on("error", () => undefined);

  async function unanswered(): Promise<number> {
    let total = 0;
    let cursor = "0";
    do {
      const [next, conversations] = await opts.redis.sscan(keys.pending(), cursor, "COUNT", PAGE);
      cursor = next;
      if (conversations.length === 0) continue;
      const pipeline = opts.redis.pipeline();
      for (const ck of conversations) pipeline.llen(keys.order(ck));
      for (const [error, length] of (await pipeline.exec()) ?? []) {
        if (error) throw error;
        total += Number(length) || 0;
      }
    } while (cursor !== "0");
    return total;
  }

  return {
    async read() {
      const [counts, backlog] = await Promise.all([
        queue.getJobCounts("waiting", "active", "delayed", "failed"),
        unanswered(),
      ]);
      return {
        waiting: counts.waiting ?? 0,
        active: counts.active ?? 0,
        delayed: counts.delayed ?? 0,
        failed: counts.failed ?? 0,
        unanswered: backlog,
      };
    },
    close: () => queue.close(),
  };
}
