/**
 * The bots role: the platform adapters validate, enqueue and acknowledge; the workers answer.
 * Commands that must not wait in the queue (/reset, /stop) go straight to Redis.
 */
import type { Redis } from "ioredis";
import { Redis as RedisClient } from "ioredis";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Config } from "../config/env-schema.js";
import { createMessageQueue, type MessageQueue } from "../queue/message-queue.js";
import { createCancelBus, type CancelBus } from "../queue/cancel-bus.js";
import { createBotGateway } from "../ingress/queue-gateway.js";
import { createToolListingStore } from "../queue/tool-listing-store.js";
import { createPublishedToolCatalogue } from "./published-tool-catalogue.js";
import { historyStoreFor } from "./history-for-config.js";
import type { BotGateway } from "../contracts/bot-gateway.js";
import { createLimitedGateway } from "../ingress/limited-gateway.js";
import type { Logger } from "../observability/logger.js";
import type { Metrics } from "../observability/metrics.js";
import { redisOptions } from "../redis/connection.js";
import { createRedisPacing } from "../reply/redis-pacing.js";
import { chatPacingKey } from "../contracts/platform-pacing.js";
import { pacingGlobalFor, pacingIntervalFor } from "./pacing.js";
import { settingsServiceFor } from "./settings-for-config.js";
import { scheduleBookFor } from "./schedules-for-config.js";
import { createScheduleCommands } from "../schedules/schedule-commands.js";
import { mayChangeSettings } from "../settings/settings-access.js";
import { builtinToolsFor } from "./tools-for-config.js";
import { builtinToolCatalogue, type ToolCatalogue } from "../tools/tool-catalogue.js";
import type { SettingsPort } from "../contracts/settings-port.js";
import { compactReplyText } from "../answer/conversation-compactor.js";
import type { StoredHistory } from "../history/history-store.js";
import type { ConversationMemory } from "./conversation-memory.js";
import { startAdaptersFor, type StartedAdapters } from "./adapters-for-config.js";
import { webChatFor } from "./web-chat-for-config.js";
import type { WebChat } from "../bots/web/web-chat-server.js";

/** A running bots role. */
export interface BotsRole {
  gateway: BotGateway;
  queue: MessageQueue;
  /** The settings commands (the terminal chat uses them too). */
  settings: SettingsPort;
  /** The web chat and console (WEB_CHAT=on), mounted on the HTTP server. */
  web?: WebChat;
  /** Mounted on the HTTP server in webhook mode. */
  telegramWebhook?: { path: string; handler(req: IncomingMessage, res: ServerResponse): void };
  /** How many platform adapters run: none means nothing will ever arrive. */
  platforms: number;
  /** For `/healthz`: each Discord shard's state. */
  healthChecks: { name: string; degraded: boolean; check(): Promise<void> }[];
  close(): Promise<void>;
}

/**
 * `/compact` summarises right here, not behind the conversation's queue. Its model client (and `openai`) is
 * loaded on the first `/compact`: the bots role otherwise never talks to the model. A failed load is not kept.
 */
function compactionMemory(
  config: Config,
  deps: { redis: Redis; history: StoredHistory; logger: Logger; metrics: Metrics },
): () => Promise<ConversationMemory> {
  let memory: Promise<ConversationMemory> | undefined;
  const build = async (): Promise<ConversationMemory> => {
    const [{ modelClientFor }, { conversationMemoryFor }, { contextWindowFor }] = await Promise.all([
      import("./agent-from-config.js"),
      import("./conversation-memory.js"),
      import("./context-window-for-config.js"),
    ]);
    const contextWindow = contextWindowFor(config);
    return conversationMemoryFor(config, { ...deps, client: modelClientFor(config, contextWindow), contextWindow });
  };
  return () =>
    (memory ??= build().catch((error: unknown) => {
      memory = undefined;
      throw error;
    }));
}

/** Starts the gateway and every adapter whose token is configured (none: only the gateway, for the terminal chat). */
export async function startBotsRole(
  config: Config,
  redis: Redis,
  deps: { logger: Logger; metrics: Metrics; onFatal?: (error: unknown) => void },
  options: { adapters?: boolean; toolCatalogue?: ToolCatalogue; webAssetsDir?: string } = {},
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
  const memory = compactionMemory(config, { redis, history, logger, metrics });
  // The workers' shared edit budget: courtesy replies take their slot in it too.
  const gate = createRedisPacing({
    redis,
    prefix: config.KEY_PREFIX,
    intervalFor: pacingIntervalFor(),
    globalFor: pacingGlobalFor,
    logger,
  });
  const gateway = createLimitedGateway({
    inner: {
      ...createBotGateway({
        queue,
        history,
        cancelBus,
        compact: async (key, opts) => compactReplyText(await (await memory()).compactor.compactNow(key, opts)),
      }),
      replySlot: (platform, chatId) => gate.acquire(chatPacingKey(platform, chatId), "final"),
    },
    redis,
    prefix: config.KEY_PREFIX,
    perUserPerMinute: config.USER_RATE_LIMIT,
    metrics,
  });

  // The MCP servers are the workers' (they publish what they have); a test may inject its own catalogue.
  const toolListing = createToolListingStore({ redis, prefix: config.KEY_PREFIX });
  const published = options.toolCatalogue
    ? undefined
    : createPublishedToolCatalogue({
        store: toolListing,
        fallback: builtinToolCatalogue(builtinToolsFor(config)),
        // One GET a second: /tools shows a server that just came up (or went) without a wait.
        refreshMs: 1_000,
        onError: (error) => logger.warn({ err: error }, "could not read the tool listing"),
      });
  const toolCatalogue = options.toolCatalogue ?? published?.catalogue ?? builtinToolCatalogue(builtinToolsFor(config));
  const scheduleBook = scheduleBookFor(config, redis);
  const settings = settingsServiceFor(
    config,
    redis,
    toolCatalogue,
    logger,
    createScheduleCommands({
      book: scheduleBook,
      isAdmin: (asker) => mayChangeSettings(asker, config.ADMIN_USER_IDS),
    }),
  );

  const closeOwn = async () => {
    published?.close();
    await cancelBus.close();
    await queue.close();
    await scheduleBook.close();
  };
  const adapters: StartedAdapters =
    options.adapters === false
      ? { started: [], healthChecks: [] }
      : await startAdaptersFor(config, {
          gateway,
          settings,
          logger,
          metrics,
          ...(deps.onFatal ? { onFatal: deps.onFatal } : {}),
        }).catch(async (error: unknown) => {
          await closeOwn();
          throw error;
        });
  const web =
    config.WEB_CHAT === "on"
      ? webChatFor(config, {
          redis,
          gateway,
          settings,
          history,
          tools: toolListing,
          logger,
          ...(options.webAssetsDir ? { assetsDir: options.webAssetsDir } : {}),
        })
      : undefined;
  const webhookTelegram = adapters.telegram;
  return {
    gateway,
    queue,
    settings,
    ...(web ? { web } : {}),
    healthChecks: adapters.healthChecks,
    ...(config.TELEGRAM_WEBHOOK_URL && webhookTelegram
      ? {
          telegramWebhook: {
            path: new URL(config.TELEGRAM_WEBHOOK_URL).pathname,
            handler: (req: IncomingMessage, res: ServerResponse) => void webhookTelegram.handleWebhook(req, res),
          },
        }
      : {}),
    platforms: adapters.started.length,
    async close() {
      web?.close();
      await Promise.allSettled(adapters.started.map((a) => a.stop()));
      await closeOwn();
    },
  };
}
