/**
 * The adapters' side of the queue (design: conversation-order.ts). Resolves only when Redis has the message,
 * so the adapter may acknowledge the platform update; rejects when Redis cannot be reached, so it must not.
 */
import { Queue } from "bullmq";
import type { Redis } from "ioredis";
import type { EnqueueResult } from "../contracts/bot-gateway.js";
import { createConversationOrder } from "./conversation-order.js";
import { inboundMessageSchema, jobIdFor } from "../contracts/inbound-message.js";
import { QUEUE_NAME, queueKeys } from "../redis/keys.js";

/** What adapters (through the BotGateway) use to queue messages. */
export interface MessageQueue {
  /** Validates and queues; "duplicate" for a message seen before, "refused" for an invalid one. */
  enqueue(message: unknown): Promise<EnqueueResult>;
  /** Closes the BullMQ queue handle (the Redis connection belongs to the caller). */
  close(): Promise<void>;
}

/** Creates the enqueue side over a caller-owned ioredis connection. */
export function createMessageQueue(opts: { connection: Redis; prefix: string }): MessageQueue {
  const queue = new Queue(QUEUE_NAME, { connection: opts.connection, prefix: opts.prefix });
  // Errors surface through the rejected enqueue call; the listener keeps EventEmitter from throwing.
  queue.on("error", () => undefined);
  const order = createConversationOrder({ redis: opts.connection, keys: queueKeys(opts.prefix), queue });

  return {
    async enqueue(raw) {
      const parsed = inboundMessageSchema.safeParse(raw);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        const where = issue?.path.length ? ` (${issue.path.join(".")})` : "";
        return { status: "refused", reason: `This message could not be processed${where}.` };
      }
      const message = parsed.data;
      const jobId = jobIdFor(message);
      const { isNew } = await order.offer(message, jobId);
      return { status: isNew ? "queued" : "duplicate", jobId };
    },
    async close() {
      await queue.close();
    },
  };
}
