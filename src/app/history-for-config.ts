/** The conversation history store as configured (both roles use the same budget and expiry). */
import type { Redis } from "ioredis";
import type { Config } from "../config/env-schema.js";
import { createHistoryStore, type StoredHistory } from "../history/history-store.js";

/** Builds the history store of this deployment from its settings. */
export function historyStoreFor(config: Config, redis: Redis): StoredHistory {
  return createHistoryStore({
    redis,
    prefix: config.KEY_PREFIX,
    maxMessages: config.HISTORY_MAX_MESSAGES,
    maxTokens: config.HISTORY_MAX_TOKENS,
    ttlSeconds: config.HISTORY_TTL_SECONDS,
  });
}
