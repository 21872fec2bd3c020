/**
 * The worker role: answers queued messages with the agent loop, streaming to the platform they came from.
 * Replies go through REST clients only, loaded per configured platform, so any number of workers can run.
 */
import type { Redis } from "ioredis";
import type { Config } from "../config/env-schema.js";
import { agentFromConfig } from "./agent-from-config.js";
import { botToolsFor, type BotTools, type BotToolsOptions } from "./tools-for-config.js";
import type { HealthCheck } from "../observability/http-server.js";
import { historyStoreFor } from "./history-for-config.js";
import { createToolListingStore, type ToolListingStore } from "../queue/tool-listing-store.js";
import { settingsStoreFor } from "./settings-for-config.js";
import { attachmentPreparerFor, spokenAnswersFor } from "./attachments-for-config.js";
import { createMessageWorker, type MessageWorker, type MessageWorkerOptions } from "../queue/message-worker.js";
import { createRedisPacing } from "../reply/redis-pacing.js";
import type { ReplyPortFactory } from "../contracts/reply-port.js";
import type { FileSource } from "../contracts/file-source.js";
import type { DiscordReplyPortFactory } from "../bots/discord/discord-reply-port.js";
import type { Platform } from "../contracts/inbound-message.js";
import { createWebReplyPortFactory } from "../bots/web/web-reply-port.js";
import { createWebEventLog } from "../bots/web/web-event-log.js";
import { createAnswerProcessor } from "../answer/answer-message.js";
import { createSecretScrubber } from "../security/secret-scrubber.js";
import { configuredSecrets } from "../security/configured-secrets.js";
import { scrubbingPortFactory } from "../answer/secret-scrubbing-port.js";
import type { Logger } from "../observability/logger.js";
import type { Metrics } from "../observability/metrics.js";
import { createJobOutcomes } from "../observability/job-outcomes.js";
import { createQueueDepthSource } from "../observability/queue-depth.js";
import { pacingGlobalFor, pacingIntervalFor, pacingLocalOnly } from "./pacing.js";
import { redisOptions } from "../redis/connection.js";
import { conversationMemoryFor } from "./conversation-memory.js";
import { contextWindowFor } from "./context-window-for-config.js";
import { Redis as RedisClient } from "ioredis";
import { createMessageQueue } from "../queue/message-queue.js";
import {
  scheduleBookFor,
  scheduleRunnerFor,
  scheduleToolsFor,
  type ScheduleTestOptions,
} from "./schedules-for-config.js";

/** Extra knobs for tests and the terminal chat. */
export interface WorkerRoleOptions {
  /** Ports besides the configured platforms (the terminal chat adds its own). */
  extraPorts?: Partial<Record<Platform, ReplyPortFactory>>;
  /** Queue timing overrides (tests use short locks to recover killed workers quickly). */
  queue?: Pick<
    MessageWorkerOptions,
    "lockDurationMs" | "stalledIntervalMs" | "backoffMs" | "attempts" | "repairIntervalMs"
  >;
  /** MCP overrides (tests pass the servers file and a short retry). */
  tools?: BotToolsOptions;
  /** Schedule overrides (tests shorten the minute of "every N minutes"). */
  schedules?: ScheduleTestOptions;
}

/** A running worker role. */
export interface WorkerRole {
  worker: MessageWorker;
  /** For `/healthz`: one per MCP server (degraded, not down, while it is away). */
  healthChecks: HealthCheck[];
  close(graceMs?: number): Promise<void>;
}

/** Starts the worker role on an open Redis connection (used for history and journals). */
export async function startWorkerRole(
  config: Config,
  redis: Redis,
  deps: { logger: Logger; metrics: Metrics },
  options: WorkerRoleOptions = {},
): Promise<WorkerRole> {
  const { logger, metrics } = deps;
  const scheduleBook = scheduleBookFor(config, redis, options.schedules);
  const tools = await botToolsFor(config, logger, {
    ...options.tools,
    extraBuiltIn: [...(options.tools?.extraBuiltIn ?? []), ...scheduleToolsFor(config, scheduleBook)],
  });
  // In the background: answers start at once with whatever tools are connected by then.
  tools.mcp?.start();
  // One context size for the budget and the requests (Ollama's num_ctx is what the budget counts with).
  const contextWindow = contextWindowFor(config);
  const agent = agentFromConfig(config, tools.catalogue, contextWindow);
  const history = historyStoreFor(config, redis);
  const memory = conversationMemoryFor(config, {
    redis,
    history,
    client: agent.deps.client,
    contextWindow,
    tools: () => tools.catalogue.forRequest(),
    logger,
    metrics,
  });
  void memory.warm();

  const ports: Partial<Record<Platform, ReplyPortFactory>> = { ...options.extraPorts };
  let discordPorts: DiscordReplyPortFactory | undefined;
  let telegramFiles: FileSource | undefined;
  if (config.TELEGRAM_BOT_TOKEN) {
    const telegram = await telegramSide(config, config.TELEGRAM_BOT_TOKEN, metrics);
    ports.telegram = telegram.ports;
    telegramFiles = telegram.files;
  }
  if (config.DISCORD_BOT_TOKEN) {
    discordPorts = await discordSide(config, config.DISCORD_BOT_TOKEN, metrics);
    ports.discord = discordPorts;
  }
  // Web chat answers go through Redis to whichever bots process serves the browser: any worker can answer them.
  ports.web = createWebReplyPortFactory({
    log: createWebEventLog({ redis, prefix: config.KEY_PREFIX, ttlSeconds: config.HISTORY_TTL_SECONDS }),
    onError: (error) => logger.warn({ err: error }, "could not append to a web chat stream"),
  });
  // One budget per chat and one per platform, shared with every other worker process of this deployment.
  const gate = createRedisPacing({
    redis,
    prefix: config.KEY_PREFIX,
    intervalFor: pacingIntervalFor(discordPorts),
    globalFor: pacingGlobalFor,
    localOnly: pacingLocalOnly,
    logger,
  });
  // Last line of defence: whatever the model writes, no token or key of ours reaches a chat.
  const scrubber = createSecretScrubber([...configuredSecrets(config), ...tools.secrets]);
  const speech = spokenAnswersFor(config, logger);
  const safePorts: Partial<Record<Platform, ReplyPortFactory>> = Object.fromEntries(
    Object.entries(ports).map(([platform, factory]) => [platform, scrubbingPortFactory(factory, scrubber)]),
  );

  const settings = settingsStoreFor(config, redis, logger);
  const { process, onGiveUp } = createAnswerProcessor({
    history,
    settings,
    context: memory.context,
    compactor: memory.compactor,
    agent: agent.run,
    ports: safePorts,
    gate,
    showReasoning: config.SHOW_REASONING,
    attachments: attachmentPreparerFor(config, {
      logger,
      ...(telegramFiles ? { telegramFiles } : {}),
      modelFor: async (message) => (await settings.read(message.conversationKey)).model,
    }),
    ...(speech ? { speech } : {}),
    logger,
    metrics,
    // The whole reply, before it is split: a secret across two messages is whole only here.
    transformReply: (markdown) => scrubber.scrub(markdown),
  });

  const worker = createMessageWorker({
    connection: () => new RedisClient(config.REDIS_URL, redisOptions()),
    prefix: config.KEY_PREFIX,
    concurrency: config.WORKER_CONCURRENCY,
    process,
    onGiveUp,
    onOutcome: createJobOutcomes({ logger, metrics }),
    logger,
    lockDurationMs: config.QUEUE_LOCK_MS,
    stalledIntervalMs: config.QUEUE_STALLED_CHECK_MS,
    attempts: config.QUEUE_ATTEMPTS,
    backoffMs: config.QUEUE_RETRY_BACKOFF_MS,
    defaultGraceMs: config.SHUTDOWN_GRACE_MS,
    ...options.queue,
  });
  await worker.ready();
  // Schedules are delivered by every worker; BullMQ hands each run to one of them.
  const scheduleQueue = createMessageQueue({ connection: redis, prefix: config.KEY_PREFIX });
  const scheduleRunner = scheduleRunnerFor(config, {
    redis,
    book: scheduleBook,
    ports: safePorts,
    queue: scheduleQueue,
    logger,
  });
  await scheduleRunner.ready();
  // chatbot_queue_depth is read from Redis on every scrape (the same figure from every worker: use max()).
  const depth = createQueueDepthSource({ redis, prefix: config.KEY_PREFIX });
  const stopReadingDepth = metrics.readQueueDepthFrom(() => depth.read());
  const stopPublishingTools = publishToolListing(
    tools,
    createToolListingStore({ redis, prefix: config.KEY_PREFIX }),
    logger,
  );
  logger.info({ concurrency: config.WORKER_CONCURRENCY, platforms: Object.keys(ports) }, "worker ready");
  return {
    worker,
    healthChecks: tools.healthChecks,
    async close(graceMs) {
      stopReadingDepth();
      stopPublishingTools();
      await scheduleRunner.close();
      await worker.close(graceMs !== undefined ? { graceMs } : {});
      await scheduleQueue.close();
      await scheduleBook.close();
      await depth.close();
      await tools.close();
    },
  };
}

/** The worker's Discord replies, through one REST client whose every call is metered. */
async function discordSide(config: Config, token: string, metrics: Metrics): Promise<DiscordReplyPortFactory> {
  const [{ createDiscordRestClient }, { createDiscordReplyPortFactory }, { meteredDiscordRequests }] =
    await Promise.all([
      import("../bots/discord/discord-rest-client.js"),
      import("../bots/discord/discord-reply-port.js"),
      import("../bots/discord/discord-request-meter.js"),
    ]);
  return createDiscordReplyPortFactory({
    rest: createDiscordRestClient({
      token,
      apiBase: config.DISCORD_API_BASE,
      makeRequest: meteredDiscordRequests(metrics),
    }),
    statusReactions: config.STATUS_REACTIONS === "on",
  });
}

/** The worker's Telegram replies and file downloads, through one grammY `Api` whose every call is metered. */
async function telegramSide(
  config: Config,
  token: string,
  metrics: Metrics,
): Promise<{ ports: ReplyPortFactory; files: FileSource }> {
  const [
    { Api },
    { createTelegramReplyPortFactory },
    { telegramRequestMeter },
    { createTelegramFileSource },
    { telegramClientOptions },
  ] = await Promise.all([
    import("grammy"),
    import("../bots/telegram/telegram-reply-port.js"),
    import("../bots/telegram/telegram-request-meter.js"),
    import("../bots/telegram/telegram-file-source.js"),
    import("../bots/telegram/telegram-client.js"),
  ]);
  const apiRoot = config.TELEGRAM_API_ROOT;
  const api = new Api(token, telegramClientOptions(apiRoot));
  api.config.use(telegramRequestMeter(metrics));
  return {
    ports: createTelegramReplyPortFactory({ api, useDrafts: true, statusReactions: config.STATUS_REACTIONS === "on" }),
    files: createTelegramFileSource({ api, token, apiRoot }),
  };
}

const TOOL_LISTING_REFRESH_MS = 30_000;

/** Keeps this worker's tool listing in Redis for `/tools`: at start, on every MCP change, and on a timer (it expires if we die). */
function publishToolListing(tools: BotTools, store: ToolListingStore, logger: Logger): () => void {
  let stopped = false;
  const publish = (): void => {
    if (stopped) return;
    store
      .publish(
        { updatedAt: Date.now(), groups: tools.catalogue.groups() },
        Math.ceil((TOOL_LISTING_REFRESH_MS * 3) / 1000),
      )
      .catch((error: unknown) => logger.warn({ err: error }, "could not publish the tool listing"));
  };
  publish();
  tools.mcp?.onChange(publish);
  const timer = setInterval(publish, TOOL_LISTING_REFRESH_MS);
  timer.unref();
  return () => {
    stopped = true;
    clearInterval(timer);
  };
}
