/**
 * Schedules as configured: the book, the model's schedule tools, and the worker's runner. A fixed text is posted
 * through the reply port; a prompt is queued as a message of its conversation, answered like any other.
 */
import type { Redis } from "ioredis";
import { Redis as RedisClient } from "ioredis";
import type { Config } from "../config/env-schema.js";
import type { InboundMessage, Platform } from "../contracts/inbound-message.js";
import type { ReplyPortFactory } from "../contracts/reply-port.js";
import type { Logger } from "../observability/logger.js";
import type { MessageQueue } from "../queue/message-queue.js";
import { redisOptions } from "../redis/connection.js";
import { createScheduleBook, type ScheduleBook, type ScheduleChat } from "../schedules/schedule-book.js";
import { type ScheduleRunner, startScheduleRunner } from "../schedules/schedule-runner.js";
import { createScheduleTools } from "../schedules/schedule-tools.js";
import { adminIdOf } from "../settings/settings-access.js";
import type { Tool } from "../tools/tool.js";

const SERVER_ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone;

/** Overrides for tests. */
export interface ScheduleTestOptions {
  /** Milliseconds per minute of "every N minutes" (see ScheduleBookOptions.msPerMinute). */
  msPerMinute?: number;
}

/** The schedule book of this deployment. */
export function scheduleBookFor(config: Config, redis: Redis, test: ScheduleTestOptions = {}): ScheduleBook {
  return createScheduleBook({
    redis,
    prefix: config.KEY_PREFIX,
    maxPerChat: config.MAX_SCHEDULES_PER_CHAT,
    maxRuns: config.SCHEDULE_MAX_RUNS,
    ...(test.msPerMinute ? { msPerMinute: test.msPerMinute } : {}),
  });
}

/** schedule_message, list_schedules, cancel_schedule over the book. */
export function scheduleToolsFor(config: Config, book: ScheduleBook): Tool[] {
  return createScheduleTools({
    book,
    serverTimeZone: SERVER_ZONE,
    isBotAdmin: (c) => config.ADMIN_USER_IDS.includes(adminIdOf({ platform: c.platform, userId: c.author.id })),
  });
}

/** Starts the worker's schedule runner. */
export function scheduleRunnerFor(
  config: Config,
  deps: {
    redis: Redis;
    book: ScheduleBook;
    ports: Partial<Record<Platform, ReplyPortFactory>>;
    queue: MessageQueue;
    logger: Logger;
  },
): ScheduleRunner {
  const post = async (chat: ScheduleChat, text: string) => {
    const factory = deps.ports[chat.platform];
    if (!factory) throw new Error(`no ${chat.platform} client in this worker`);
    const port = factory(messageIn(chat, { id: "0", displayName: "schedule" }, text, "0"));
    // A new message of its own, replying to nothing.
    await port.send(port.format(text), { continuation: true, final: true });
  };
  return startScheduleRunner({
    connection: () => new RedisClient(config.REDIS_URL, redisOptions()),
    redis: deps.redis,
    prefix: config.KEY_PREFIX,
    book: deps.book,
    maxRuns: config.SCHEDULE_MAX_RUNS,
    lockDurationMs: config.QUEUE_LOCK_MS,
    stalledIntervalMs: config.QUEUE_STALLED_CHECK_MS,
    log: deps.logger,
    delivery: {
      post,
      async ask(record, runId, note) {
        if (note) await post(record.chat, `⏰ ${note}`);
        // A message id per run (a number below 2^31: Telegram replies to it "without reply" since it does not exist).
        const messageId = String(Number(/(\d+)$/.exec(runId)?.[1] ?? Date.now()) % 2_147_483_647);
        const result = await deps.queue.enqueue(messageIn(record.chat, record.author, record.text, messageId));
        if (result.status === "refused") throw new Error(result.reason ?? "the scheduled message was refused");
      },
    },
  });
}

function messageIn(
  chat: ScheduleChat,
  author: { id: string; displayName: string },
  text: string,
  messageId: string,
): InboundMessage {
  return {
    platform: chat.platform,
    conversationKey: chat.conversationKey,
    chatId: chat.chatId,
    ...(chat.threadId ? { threadId: chat.threadId } : {}),
    messageId,
    chatType: chat.chatType,
    ...(chat.guildId ? { guildId: chat.guildId } : {}),
    author,
    text,
    receivedAt: Date.now(),
  };
}
