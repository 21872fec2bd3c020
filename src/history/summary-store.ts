/**
 * A conversation's running summary (`P:history:<key>:summary`, the history's TTL): turns folded out of the
 * history live on as this text. Folding is one script that first checks the last summarised message is still
 * where it was and no /reset came since; otherwise nothing changes, so no turn is lost unsummarised.
 */
import type { Redis } from "ioredis";
import { redisScript } from "../redis/script.js";
import { historyKeys } from "../redis/keys.js";

/** What the summary key holds. */
export interface ConversationSummary {
  /** The summary text, as the model wrote it. */
  text: string;
  /** Its tokens as the system note that carries it. */
  tokens: number;
  /** Messages folded into it so far. */
  messages: number;
  /** When it was last updated (ms). */
  updatedAt: number;
}

// KEYS: list, tokens, reset marker, summary. ARGV: count, check index, check element, summary JSON, ttl, startedAt, folded tokens.
const FOLD = redisScript(`
local list, counter, resetMarker, summary = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local count = tonumber(ARGV[1])
if tonumber(ARGV[6]) < tonumber(redis.call('GET', resetMarker) or '-1') then return 0 end
if redis.call('LLEN', list) < count or redis.call('LINDEX', list, tonumber(ARGV[2])) ~= ARGV[3] then return 0 end
redis.call('LTRIM', list, count, -1)
local ttl = tonumber(ARGV[5])
redis.call('SET', summary, ARGV[4], 'EX', ttl)
local total = tonumber(redis.call('GET', counter) or '')
if total ~= nil then
  total = math.max(0, total - tonumber(ARGV[7]))
  if redis.call('EXISTS', list) == 1 then redis.call('SET', counter, total, 'EX', ttl) else redis.call('DEL', counter) end
end
return 1
`);

/** Reads and folds conversation summaries. */
export interface SummaryStore {
  /** The conversation's summary, if it has one. */
  read(conversationKey: string): Promise<ConversationSummary | undefined>;
  /**
   * Replaces the first `count` list elements by `summary` (`tokens`: what they counted); false (nothing
   * changed) when the element at `check.at` is no longer `check.element` or the history was reset after `startedAt`.
   */
  fold(
    conversationKey: string,
    fold: {
      count: number;
      check: { at: number; element: string };
      tokens: number;
      summary: ConversationSummary;
      startedAt: number;
    },
  ): Promise<boolean>;
}

/** Creates the summary store of one deployment. */
export function createSummaryStore(opts: { redis: Redis; prefix: string; ttlSeconds: number }): SummaryStore {
  return {
    async read(conversationKey) {
      const raw = await opts.redis.get(historyKeys(opts.prefix, conversationKey).summary);
      if (!raw) return undefined;
      try {
        const value = JSON.parse(raw) as Partial<ConversationSummary>;
        if (typeof value.text !== "string" || value.text.trim() === "") return undefined;
        return {
          text: value.text,
          tokens: Number(value.tokens) || 0,
          messages: Number(value.messages) || 0,
          updatedAt: Number(value.updatedAt) || 0,
        };
      } catch {
        return undefined; // not ours (edited by hand): the conversation simply has no summary
      }
    },

    async fold(conversationKey, fold) {
      if (fold.count <= 0) return false;
      const keys = historyKeys(opts.prefix, conversationKey);
      const result = await FOLD.run(
        opts.redis,
        [keys.list, keys.tokens, keys.reset, keys.summary],
        [
          fold.count,
          fold.check.at,
          fold.check.element,
          JSON.stringify(fold.summary),
          opts.ttlSeconds,
          fold.startedAt,
          fold.tokens,
        ],
      );
      return Number(result) === 1;
    },
  };
}
