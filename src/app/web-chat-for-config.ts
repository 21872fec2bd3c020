/** The bots role's web chat (WEB_CHAT=on): sessions and streams in Redis, and the console's view of the history store. */
import { Redis as RedisClient, type Redis } from "ioredis";
import type { Config } from "../config/env-schema.js";
import type { BotGateway } from "../contracts/bot-gateway.js";
import type { SettingsPort } from "../contracts/settings-port.js";
import { decodeHistoryElement, type StoredHistory } from "../history/history-store.js";
import type { Logger } from "../observability/logger.js";
import { redisOptions } from "../redis/connection.js";
import { historyKeys } from "../redis/keys.js";
import type { ToolListingStore } from "../queue/tool-listing-store.js";
import { createWebChat, type WebChat } from "../bots/web/web-chat-server.js";
import type { ConsoleSource, ConversationSummary } from "../bots/web/web-console-source.js";
import { createWebEventLog } from "../bots/web/web-event-log.js";
import { createWebSessions } from "../bots/web/web-sessions.js";
import { settingsStoreFor } from "./settings-for-config.js";

/** Conversations the console lists at most (the newest first). */
const MAX_LISTED = 500;

const PLATFORMS: Record<string, string> = { tg: "telegram", dc: "discord", term: "terminal", web: "web" };

/** Undoes `keyPart` (redis/keys.ts). */
function unescapeKeyPart(part: string): string {
  return part.replace(/%7B|%7D|%25/g, (c) => (c === "%7B" ? "{" : c === "%7D" ? "}" : "%"));
}

/** The console's data from the history store's keys (SCAN: the console is an occasional reader). */
export function consoleSourceFor(
  config: Config,
  deps: { redis: Redis; history: StoredHistory; tools: ToolListingStore },
): ConsoleSource {
  const listPrefix = historyKeys(config.KEY_PREFIX, "").list;
  return {
    async conversations() {
      const keys: string[] = [];
      let cursor = "0";
      do {
        const [next, batch] = await deps.redis.scan(cursor, "MATCH", `${listPrefix}*`, "COUNT", 500);
        cursor = next;
        for (const key of batch) if (!/:(tokens|reset|summary)$/.test(key)) keys.push(key);
      } while (cursor !== "0" && keys.length < 5000);
      const pipeline = deps.redis.pipeline();
      for (const key of keys) pipeline.llen(key).pttl(key).lrange(key, 0, 3);
      const results = (await pipeline.exec()) ?? [];
      const now = Date.now();
      const rows: ConversationSummary[] = keys.map((key, i) => {
        const length = Number(results[i * 3]?.[1] ?? 0);
        const pttl = Number(results[i * 3 + 1]?.[1] ?? -1);
        const first = ((results[i * 3 + 2]?.[1] as string[] | undefined) ?? [])
          .map(decodeHistoryElement)
          .find((m) => m?.role === "user");
        const conversationKey = unescapeKeyPart(key.slice(listPrefix.length));
        const tag = conversationKey.split(":")[0] ?? "";
        const title = (first?.content ?? "").replace(/\s+/g, " ").trim();
        return {
          key: conversationKey,
          platform: PLATFORMS[tag] ?? tag,
          title: title.length > 80 ? `${title.slice(0, 79)}…` : title,
          // The list's expiry is renewed on every stored turn: the time since is its age.
          ...(pttl > 0 ? { lastActivity: now - (config.HISTORY_TTL_SECONDS * 1000 - pttl) } : {}),
          messages: length,
        };
      });
      return rows
        .filter((row) => row.messages > 0)
        .sort((a, b) => (b.lastActivity ?? 0) - (a.lastActivity ?? 0))
        .slice(0, MAX_LISTED);
    },
    async history(conversationKey) {
      if (conversationKey === "") return [];
      return (await deps.history.load(conversationKey)).map((m) => ({
        role: m.role,
        content: m.content,
        ...(m.role === "user" && m.name ? { name: m.name } : {}),
        ...(m.role === "assistant" && m.tool_calls
          ? { toolCalls: m.tool_calls.map((c) => `${c.function.name}(${c.function.arguments})`) }
          : {}),
      }));
    },
    async tools() {
      return (await deps.tools.read())?.groups ?? [];
    },
  };
}

/** Builds the web chat for the bots role. */
export function webChatFor(
  config: Config,
  deps: {
    redis: Redis;
    gateway: BotGateway;
    settings: SettingsPort;
    history: StoredHistory;
    tools: ToolListingStore;
    logger: Logger;
    assetsDir?: string;
  },
): WebChat {
  const settingsStore = settingsStoreFor(config, deps.redis, deps.logger);
  return createWebChat({
    reasoningOf: async (ck) => (await settingsStore.read(ck)).reasoning,
    gateway: deps.gateway,
    settings: deps.settings,
    sessions: createWebSessions({ redis: deps.redis, prefix: config.KEY_PREFIX }),
    log: createWebEventLog({ redis: deps.redis, prefix: config.KEY_PREFIX, ttlSeconds: config.HISTORY_TTL_SECONDS }),
    console: consoleSourceFor(config, deps),
    reader: () => new RedisClient(config.REDIS_URL, redisOptions()),
    users: config.WEB_USERS,
    ...(config.ADMIN_TOKEN ? { adminToken: config.ADMIN_TOKEN } : {}),
    maxInputChars: config.MAX_INPUT_CHARS,
    logger: deps.logger.child({ adapter: "web" }),
    ...(deps.assetsDir ? { assetsDir: deps.assetsDir } : {}),
  });
}
