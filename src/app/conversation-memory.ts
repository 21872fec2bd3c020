/**
 * A role's conversation memory: the token counter (the server's `/tokenize`, else Qwen3's tokenizer in process,
 * else the estimate), the request budget, the summary store and the compactor that folds old turns into it.
 */
import type OpenAI from "openai";
import type { Redis } from "ioredis";
import type { Config } from "../config/env-schema.js";
import { createSummarizer } from "../agent/conversation-summarizer.js";
import { buildSystemPrompt } from "../agent/system-prompt.js";
import type { StoredHistory } from "../history/history-store.js";
import { createSummaryStore } from "../history/summary-store.js";
import { createContextBudget } from "../answer/context-budget.js";
import { createConversationContext, type ConversationContext } from "../answer/conversation-context.js";
import { createConversationCompactor, type ConversationCompactor } from "../answer/conversation-compactor.js";
import type { Logger } from "../observability/logger.js";
import type { Metrics } from "../observability/metrics.js";
import type { ContextWindow } from "../tokens/context-window.js";
import { createQwen3Tokenizer } from "../tokens/qwen3-tokenizer.js";
import { createServerTokenizer, serverRootOf } from "../tokens/server-tokenizer.js";
import { contextWindowFor } from "./context-window-for-config.js";
import { createTokenCounter } from "../tokens/token-counter.js";
import { toOpenAiTool, type AgentTool } from "../tools/tool.js";

/** The summary request's completion budget; a stored summary may be at most twice this (issue 36, item 8). */
const SUMMARY_COMPLETION_TOKENS = 400;

/** The pieces answering and `/compact` use. */
export interface ConversationMemory {
  context: ConversationContext;
  compactor: ConversationCompactor;
  /** Finds the tokenizer ahead of the first answer: asks the server, loads Qwen3's in process only if the server has none. */
  warm(): Promise<void>;
}

/** Builds the conversation memory over the history store and the model client. */
export function conversationMemoryFor(
  config: Config,
  deps: {
    redis: Redis;
    history: StoredHistory;
    client: OpenAI;
    /** The tools a request carries now (read per request: MCP servers come and go). */
    tools?: () => readonly AgentTool[];
    logger: Logger;
    metrics?: Metrics;
    /** The process's context size, shared with the model client (Ollama's num_ctx); by default asked here. */
    contextWindow?: () => Promise<ContextWindow>;
  },
): ConversationMemory {
  const serverRoot = serverRootOf(config.OPENAI_BASE_URL);
  const counter = createTokenCounter({
    tokenizers: [
      createServerTokenizer({
        serverRoot,
        apiKey: config.OPENAI_API_KEY,
      }),
      createQwen3Tokenizer(),
    ],
    onFallback: (from, error) =>
      deps.logger.info({ tokenizer: from, err: error }, "token counting falls back to the next tokenizer"),
  });
  const budget = createContextBudget({
    resolveWindow: deps.contextWindow ?? contextWindowFor(config),
    counter,
    reserveTokens: config.MODEL_MAX_TOKENS,
    overhead: () => ({
      system: buildSystemPrompt({ now: new Date() }),
      tools: (deps.tools?.() ?? []).map(toOpenAiTool),
    }),
    onWindow: (window) =>
      deps.logger.info(
        { contextTokens: window.tokens, from: window.source, ...(window.detail ? { detail: window.detail } : {}) },
        "model context size",
      ),
  });
  const summaries = createSummaryStore({
    redis: deps.redis,
    prefix: config.KEY_PREFIX,
    ttlSeconds: config.HISTORY_TTL_SECONDS,
  });
  const context = createConversationContext({ history: deps.history, summaries, counter, budget });
  const compactor = createConversationCompactor({
    history: deps.history,
    summaries,
    summarize: createSummarizer({
      client: deps.client,
      model: config.MODEL,
      modelServer: config.MODEL_SERVER,
      maxSummaryTokens: SUMMARY_COMPLETION_TOKENS,
    }),
    maxSummaryTokens: 2 * SUMMARY_COMPLETION_TOKENS,
    counter,
    budget,
    maxMessages: config.HISTORY_MAX_MESSAGES,
    maxTokens: config.HISTORY_MAX_TOKENS,
    logger: deps.logger,
    ...(deps.metrics ? { metrics: deps.metrics } : {}),
  });
  return {
    context,
    compactor,
    async warm() {
      await counter.countText("warm-up");
    },
  };
}
