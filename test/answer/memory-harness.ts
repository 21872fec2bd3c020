/**
 * Answering with the whole conversation memory for real: the agent loop against the fake
 * llama.cpp server (its `/tokenize`, `/props` and context check on), history and summaries in
 * real Redis, the answer processor streaming into a recording reply port. Built from a Config
 * the way the worker role builds it, so the budget, the counter and the compactor are the
 * deployed ones.
 */
import { Redis } from "ioredis";
import { pino } from "pino";
import { createModelClient } from "../../src/agent/model-client.js";
import { runAgent } from "../../src/agent/run-agent.js";
import { createAnswerProcessor } from "../../src/answer/answer-message.js";
import { conversationMemoryFor, type ConversationMemory } from "../../src/app/conversation-memory.js";
import { historyStoreFor } from "../../src/app/history-for-config.js";
import type { Config } from "../../src/config/env-schema.js";
import type { AgentTool } from "../../src/tools/tool.js";
import { loadConfig } from "../../src/config/load-config.js";
import type { InboundMessage } from "../../src/contracts/inbound-message.js";
import { createMemoryReplyJournal } from "../../src/contracts/reply-journal.js";
import type { StoredHistory } from "../../src/history/history-store.js";
import { createSummaryStore, type SummaryStore } from "../../src/history/summary-store.js";
import { createMetrics, type Metrics } from "../../src/observability/metrics.js";
import type { JobContext } from "../../src/queue/message-worker.js";
import { createLocalRateGate } from "../../src/reply/rate-gate.js";
import { startFakeOpenAI, type FakeHandler, type FakeOpenAI } from "../fakes/openai-server.js";
import { qwen3Encoder, type LlamaExtrasOptions } from "../fakes/llama-extras.js";
import { createRecordingReplyPort, type RecordingReplyPort } from "../reply/recording-reply-port.js";
import { createTestRedis, type TestRedis } from "../support/redis.js";

/** A running answering set-up. */
export interface MemoryHarness {
  model: FakeOpenAI;
  config: Config;
  history: StoredHistory;
  summaries: SummaryStore;
  memory: ConversationMemory;
  metrics: Metrics;
  t: TestRedis;
  /** The connection the stores and the processor use. */
  redis: Redis;
  /** Answers one message; resolves with the port it streamed into. */
  ask(
    text: string,
    opts?: {
      author?: string;
      chatType?: "private" | "group";
      conversationKey?: string;
      replyTo?: InboundMessage["replyTo"];
    },
  ): Promise<RecordingReplyPort>;
  close(): Promise<void>;
}

/** Starts the fake model (llama options as given), Redis stores and the processor. */
export async function startMemoryHarness(opts: {
  env?: Record<string, string>;
  llama?: LlamaExtrasOptions;
  handler?: FakeHandler;
  /** Tools every request carries (default none). */
  tools?: AgentTool[];
}): Promise<MemoryHarness> {
  const tools = opts.tools ?? [];
  const model = await startFakeOpenAI({ llama: opts.llama ?? {}, ...(opts.handler ? { handler: opts.handler } : {}) });
  const t = createTestRedis("memory");
  const config = loadConfig({
    REDIS_URL: t.url,
    KEY_PREFIX: t.prefix,
    OPENAI_BASE_URL: model.url,
    ENABLE_THINKING: "false",
    ...opts.env,
  });
  const redis = new Redis(t.url, { maxRetriesPerRequest: 3 });
  const logger = pino({ level: "silent" });
  const metrics = createMetrics();
  const client = createModelClient({
    baseURL: config.OPENAI_BASE_URL,
    apiKey: config.OPENAI_API_KEY,
    timeoutMs: 10_000,
  });
  const history = historyStoreFor(config, redis);
  const memory = conversationMemoryFor(config, { redis, history, client, logger, metrics, tools: () => tools });
  const summaries = createSummaryStore({ redis, prefix: config.KEY_PREFIX, ttlSeconds: config.HISTORY_TTL_SECONDS });
  let port = createRecordingReplyPort({ flavour: "discord", limits: { maxLength: 2000, minEditIntervalMs: 0 } });
  const { process } = createAnswerProcessor({
    history,
    context: memory.context,
    compactor: memory.compactor,
    agent: (messages, signal, agentOpts) =>
      runAgent(
        {
          client,
          model: config.MODEL,
          modelServer: config.MODEL_SERVER,
          enableThinking: config.ENABLE_THINKING,
          maxToolRounds: config.MAX_TOOL_ROUNDS,
          maxTokens: config.MODEL_MAX_TOKENS,
          toolTimeoutMs: 1000,
          tools,
        },
        { messages, signal, ...(agentOpts?.shrinkHistory ? { shrinkHistory: agentOpts.shrinkHistory } : {}) },
      ),
    ports: { discord: () => port },
    gate: createLocalRateGate({ minIntervalMs: 0 }),
    showReasoning: "off",
    logger,
    metrics,
  });
  // Both tokenizers loaded before the first question, so every count in these tests is exact.
  await qwen3Encoder();
  await memory.warm();
  let sequence = 0;
  return {
    model,
    config,
    history,
    summaries,
    memory,
    metrics,
    t,
    redis,
    async ask(text, askOpts = {}) {
      port = createRecordingReplyPort({ flavour: "discord", limits: { maxLength: 2000, minEditIntervalMs: 0 } });
      const id = String(++sequence);
      const message: InboundMessage = {
        platform: "discord",
        conversationKey: askOpts.conversationKey ?? "dc:100",
        chatId: "100",
        messageId: id,
        chatType: askOpts.chatType ?? "private",
        author: { id: "u1", displayName: askOpts.author ?? "Ada" },
        text,
        ...(askOpts.replyTo ? { replyTo: askOpts.replyTo } : {}),
        receivedAt: Date.now(),
      };
      const ctx: JobContext = {
        jobId: `discord-100-${id}`,
        attempt: 1,
        isFinalAttempt: true,
        signal: new AbortController().signal,
        journal: createMemoryReplyJournal(),
        markAnswered: async () => undefined,
      };
      await process(message, ctx);
      return port;
    },
    async close() {
      await model.close();
      redis.disconnect();
      await t.cleanup();
    },
  };
}
