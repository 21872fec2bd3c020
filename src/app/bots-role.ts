/**
 * The bots role: the platform adapters. They only validate, enqueue and
 * acknowledge; answering is the workers' job. Commands that must not wait in
 * the queue (/reset, /stop) go straight to Redis.
 */
import type { Redis } from "ioredis";
import { Redis as RedisClient } from "ioredis";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Config } from "../config/env-schema.js";
import { createMessageQueue, type MessageQueue } from "../queue/message-queue.js";
import { createCancelBus, type CancelBus } from "../queue/cancel-bus.js";
import { createBotGateway } from "../ingress/queue-gateway.js";
import { historyStoreFor } from "./history-for-config.js";
import type { BotGateway } from "../contracts/bot-gateway.js";
import { createLimitedGateway } from "../ingress/limited-gateway.js";
import { createTelegramAdapter, type TelegramAdapter } from "../adapters/telegram/telegram-adapter.js";
import { createDiscordAdapter, type DiscordAdapter } from "../adapters/discord/discord-adapter.js";
import type { Logger } from "../observability/logger.js";
import type { Metrics } from "../observability/metrics.js";
import { redisOptions } from "../redis/connection.js";
import { createRedisRateGate } from "../reply/redis-rate-gate.js";
import { chatPacingKey } from "../reply/rate-gate.js";
import { pacingGlobalFor, pacingIntervalFor } from "./pacing.js";
import { settingsServiceFor } from "./settings-for-config.js";
import { builtinToolsFor } from "./tools-for-config.js";
import { builtinToolCatalogue, type ToolCatalogue } from "../tools/tool-catalogue.js";
import type { SettingsPort } from "../contracts/settings-port.js";

/** A running bots role. */
export interface BotsRole {
  gateway: BotGateway;
  queue: MessageQueue;
  /** The settings commands (the terminal chat uses them too). */
  settings: SettingsPort;
  /** Mounted on the HTTP server in webhook mode. */
  telegramWebhook?: { path: string; handler(req: IncomingMessage, res: ServerResponse): void };
  close(): Promise<void>;
}

/** Starts the gateway and every adapter whose token is configured (none: only the gateway, for the terminal chat). */
export async function startBotsRole(
  config: Config,
  redis: Redis,
  deps: { logger: Logger; metrics: Metrics; onFatal?: (error: unknown) => void },
  options: { adapters?: boolean; toolCatalogue?: ToolCatalogue } = {},
): Promise<BotsRole> {
  const { logger, metrics } = deps;
  const queue = createMessageQueue({ connection: redis, prefix: config.KEY_PREFIX });
  const cancelBus: CancelBus = createCancelBus({
    redis,
    prefix: config.KEY_PREFIX,
    subscriber: () => new RedisClient(config.REDIS_URL, redisOptions()),
    onError: (error) => logger.warn({ err: error }, "cancel bus error"),
  });
  const history = historyStoreFor(config, redis);
  // The workers' shared edit budget: courtesy replies take their slot in it too.
  const gate = createRedisRateGate({
    redis,
    prefix: config.KEY_PREFIX,
    intervalFor: pacingIntervalFor(),
    globalFor: pacingGlobalFor,
    logger,
  });
  const gateway = createLimitedGateway({
    inner: {
      ...createBotGateway({ queue, history, cancelBus }),
      replySlot: (platform, chatId) => gate.acquire(chatPacingKey(platform, chatId), "final"),
    },
    redis,
    prefix: config.KEY_PREFIX,
    perUserPerMinute: config.USER_RATE_LIMIT,
    metrics,
  });

  // Other tool sources (MCP servers) plug in through the catalogue option.
  const settings = settingsServiceFor(config, redis, options.toolCatalogue ?? builtinToolCatalogue(builtinToolsFor(config)), logger);

  const started: { stop(): Promise<void> }[] = [];
  let telegram: TelegramAdapter | undefined;
  let discord: DiscordAdapter | undefined;
  const closeAll = async () => {
    await Promise.allSettled(started.map((a) => a.stop()));
    await cancelBus.close();
    await queue.close();
  };
  try {
    if (options.adapters !== false && config.TELEGRAM_BOT_TOKEN) {
      telegram = createTelegramAdapter({
        token: config.TELEGRAM_BOT_TOKEN,
        apiRoot: config.TELEGRAM_API_ROOT,
        gateway,
        settings,
        allowedChats: config.TELEGRAM_ALLOWED_CHATS,
        allowedUsers: config.TELEGRAM_ALLOWED_USERS,
        maxInputChars: config.MAX_INPUT_CHARS,
        maxImageBytes: config.MAX_IMAGE_BYTES,
        logger: logger.child({ adapter: "telegram" }),
        ...(config.TELEGRAM_WEBHOOK_URL ? { webhook: { url: config.TELEGRAM_WEBHOOK_URL } } : {}),
        ...(deps.onFatal ? { onFatal: deps.onFatal } : {}),
      });
      await telegram.start();
      started.push(telegram);
      logger.info({ bot: telegram.botInfo?.username, mode: config.TELEGRAM_WEBHOOK_URL ? "webhook" : "polling" }, "telegram adapter started");
    }
    if (options.adapters !== false && config.DISCORD_BOT_TOKEN) {
      discord = createDiscordAdapter({
        token: config.DISCORD_BOT_TOKEN,
        apiBase: config.DISCORD_API_BASE,
        gateway,
        settings,
        allowedGuilds: config.DISCORD_ALLOWED_GUILDS,
        allowedChannels: config.DISCORD_ALLOWED_CHANNELS,
        maxInputChars: config.MAX_INPUT_CHARS,
        logger: logger.child({ adapter: "discord" }),
      });
      await discord.start();
      started.push(discord);
      logger.info("discord adapter started");
    }
  } catch (error) {
    await closeAll();
    throw error;
  }
  const webhookTelegram = telegram;
  return {
    gateway,
    queue,
    settings,
    ...(config.TELEGRAM_WEBHOOK_URL && webhookTelegram
      ? {
          telegramWebhook: {
            path: new URL(config.TELEGRAM_WEBHOOK_URL).pathname,
            handler: (req: IncomingMessage, res: ServerResponse) => void webhookTelegram.handleWebhook(req, res),
          },
        }
      : {}),
    close: closeAll,
  };
}
