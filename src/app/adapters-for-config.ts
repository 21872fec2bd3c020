/**
 * The bots role's platform adapters and their clients (a grammY Bot, a discord.js Client), built from the
 * configuration. Each is loaded only when its token is set: discord.js alone is some 40 MB of resident memory.
 */
import type { Config } from "../config/env-schema.js";
import type { BotGateway } from "../contracts/bot-gateway.js";
import type { SettingsPort } from "../contracts/settings-port.js";
import type { TelegramAdapter } from "../bots/telegram/telegram-adapter.js";
import type { Logger } from "../observability/logger.js";
import type { PlatformRequestCounter } from "../observability/platform-request-meter.js";

/** The adapters that started, in start order. */
export interface StartedAdapters {
  telegram?: TelegramAdapter;
  started: { stop(): Promise<void> }[];
  /** For `/healthz`: one per Discord shard (degraded while it reconnects). */
  healthChecks: { name: string; degraded: boolean; check(): Promise<void> }[];
}

/** Starts every adapter whose token is configured; on a failure the ones started are stopped and the error rethrown. */
export async function startAdaptersFor(
  config: Config,
  deps: {
    gateway: BotGateway;
    settings: SettingsPort;
    logger: Logger;
    metrics?: PlatformRequestCounter;
    onFatal?: (error: unknown) => void;
  },
): Promise<StartedAdapters> {
  const { gateway, settings, logger, metrics } = deps;
  const result: StartedAdapters = { started: [], healthChecks: [] };
  try {
    if (config.TELEGRAM_BOT_TOKEN) {
      const [{ Bot }, { createTelegramAdapter }, { telegramRequestMeter }, { telegramClientOptions }] =
        await Promise.all([
          import("grammy"),
          import("../bots/telegram/telegram-adapter.js"),
          import("../bots/telegram/telegram-request-meter.js"),
          import("../bots/telegram/telegram-client.js"),
        ]);
      const bot = new Bot(config.TELEGRAM_BOT_TOKEN, { client: telegramClientOptions(config.TELEGRAM_API_ROOT) });
      // The adapter's own requests (typing on receipt, short answers, polling) are counted like the worker's.
      if (metrics) bot.api.config.use(telegramRequestMeter(metrics));
      const telegram = createTelegramAdapter({
        token: config.TELEGRAM_BOT_TOKEN,
        apiRoot: config.TELEGRAM_API_ROOT,
        bot,
        gateway,
        settings,
        allowedChats: config.TELEGRAM_ALLOWED_CHATS,
        allowedUsers: config.TELEGRAM_ALLOWED_USERS,
        maxInputChars: config.MAX_INPUT_CHARS,
        maxImageBytes: config.MAX_IMAGE_BYTES,
        logger: logger.child({ adapter: "telegram" }),
        statusReactions: config.STATUS_REACTIONS === "on",
        ...(config.TELEGRAM_WEBHOOK_URL ? { webhook: { url: config.TELEGRAM_WEBHOOK_URL } } : {}),
        ...(deps.onFatal ? { onFatal: deps.onFatal } : {}),
      });
      await telegram.start();
      result.telegram = telegram;
      result.started.push(telegram);
      logger.info(
        { bot: telegram.botInfo?.username, mode: config.TELEGRAM_WEBHOOK_URL ? "webhook" : "polling" },
        "telegram adapter started",
      );
    }
    if (config.DISCORD_BOT_TOKEN) {
      const [{ createDiscordAdapter, createDiscordClient }, { meteredDiscordRequests }, shardsModule] =
        await Promise.all([
          import("../bots/discord/discord-adapter.js"),
          import("../bots/discord/discord-request-meter.js"),
          import("../bots/discord/discord-shards.js"),
        ]);
      const shards = await shardsModule.discordShardPlan({
        token: config.DISCORD_BOT_TOKEN,
        apiBase: config.DISCORD_API_BASE,
        count: config.DISCORD_SHARD_COUNT,
        ids: config.DISCORD_SHARD_IDS,
      });
      const client = createDiscordClient(config.DISCORD_API_BASE, {
        ...(metrics ? { makeRequest: meteredDiscordRequests(metrics) } : {}),
        ...(shards ? { shards } : {}),
      });
      result.healthChecks.push(...shardsModule.discordShardHealthChecks(client, shards?.shards ?? [0]));
      const discord = createDiscordAdapter({
        token: config.DISCORD_BOT_TOKEN,
        apiBase: config.DISCORD_API_BASE,
        client,
        gateway,
        settings,
        allowedGuilds: config.DISCORD_ALLOWED_GUILDS,
        allowedChannels: config.DISCORD_ALLOWED_CHANNELS,
        autoThread: config.DISCORD_AUTO_THREAD,
        statusReactions: config.STATUS_REACTIONS === "on",
        maxInputChars: config.MAX_INPUT_CHARS,
        logger: logger.child({ adapter: "discord" }),
      });
      await discord.start();
      result.started.push(discord);
      logger.info("discord adapter started");
    }
  } catch (error) {
    await Promise.allSettled(result.started.map((a) => a.stop()));
    throw error;
  }
  return result;
}
