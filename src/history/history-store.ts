/**
 * Conversation history in Redis: a list `P:history:<key>` of `<role code><tokens>|<message JSON>` elements
 * (so the script budgets without decoding JSON) and a token total `P:history:<key>:tokens`.
 *
 * Appending is one script: RPUSH the turn and, only over budget, LTRIM at the first place history may start,
 * so the cost is O(turn + trimmed). History starts preferably at a user message, else an assistant one, never
 * at a `tool` message (so a call is never cut from its results); if nothing fits, it is emptied. Every append
 * renews the TTL of both keys and of the summary (summary-store.ts).
 */
import type { Redis } from "ioredis";
import type { ChatMessage } from "../contracts/chat-message.js";
import { historyKeys } from "../redis/keys.js";
import { redisScript } from "../redis/script.js";
import { pipelineReply, type PipelinedRead } from "../redis/pipelined-read.js";
import type { CountedMessage } from "./fit-history.js";
import { estimateMessageTokens } from "../tokens/token-estimate.js";
import { repairToolPairs } from "./tool-pairs.js";

/** A stored message with its token count and its place in the Redis list (what a fold trims up to). */
export interface StoredMessage extends CountedMessage {
  /** 0-based index of its list element. */
  at: number;
  /** The list element as stored (a fold checks the list still starts the same way). */
  element: string;
}

/** What `append` knows of the turn, and tells back. */
export interface AppendOptions {
  /** When the question was asked: a turn older than the conversation's last `/reset` is dropped. */
  askedAt?: number;
  /** Token counts of the messages (default: estimates). */
  tokens?: readonly number[];
  /** Told the history's size once the turn is stored and trimmed. */
  onStored?(size: HistorySize): void;
  /** False when there was no summary as the answer began: its lifetime is left alone (a new one has its own). */
  summary?: boolean;
}

/** A stored history's token total and number of messages, as the store keeps them. */
export interface HistorySize {
  tokens: number;
  messages: number;
}

/** A conversation's remembered messages. */
export interface HistoryStore {
  /** The conversation's messages, oldest first (no system prompt; that is the agent's). */
  load(conversationKey: string): Promise<ChatMessage[]>;
  /** The same messages plus another store's read, in one round trip (the worker reads the settings this way). */
  loadWith<T>(conversationKey: string, also: PipelinedRead<T>): Promise<{ messages: ChatMessage[]; also: T }>;
  /** Appends one turn and trims to the budget; false when dropped for being asked before the last `/reset`. */
  append(conversationKey: string, messages: readonly ChatMessage[], opts?: AppendOptions): Promise<boolean>;
  /** Forgets the conversation (`/reset`); `at` (ms, default now) is when the user asked for it. */
  reset(conversationKey: string, at?: number): Promise<void>;
}

// KEYS: list, tokens, reset marker, [summary: its lifetime follows the history's]. ARGV: maxMessages, maxTokens, ttlSeconds, askedAt (-1 = always), encoded elements...
// Returns -1 (dropped: asked before a reset) or {token total, messages} once stored and trimmed.
const APPEND = redisScript(`
local list, counter, resetMarker, summary = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local maxMessages = tonumber(ARGV[1])
local maxTokens = tonumber(ARGV[2])
local ttl = tonumber(ARGV[3])
local askedAt = tonumber(ARGV[4])
-- The reset marker and the token counter in one read (the marker only matters for a turn that says when it was asked).
local read = askedAt >= 0 and redis.call('MGET', resetMarker, counter) or {false, redis.call('GET', counter)}
if askedAt >= 0 and askedAt < tonumber(read[1] or '-1') then
  return -1
end
local function meta(el)
  local code, n = string.match(el, '^(%a)(%d+)|')
  return code, tonumber(n) or 0
end
local total = tonumber(read[2] or '')
-- The turn in one RPUSH (in chunks, far below Lua's limit on unpacked values); its reply is the new length.
local len = 0
for i = 5, #ARGV, 1000 do
  len = redis.call('RPUSH', list, unpack(ARGV, i, math.min(i + 999, #ARGV)))
end
local before = len - (#ARGV - 4)
if total == nil or (before == 0 and total ~= 0) then
  -- the counter expired apart from the list, or was never written: recount the earlier messages once
  total = 0
  if before > 0 then
    local all = redis.call('LRANGE', list, 0, before - 1)
    for i = 1, #all do
      local _, n = meta(all[i])
      total = total + n
    end
  end
end
for i = 5, #ARGV do
  local _, n = meta(ARGV[i])
  total = total + n
end
if len > maxMessages or total > maxTokens then
  local dropped = 0
  local cut = nil
  local fallback = nil
  local idx = 0
  while idx < len and cut == nil do
    local page = redis.call('LRANGE', list, idx, idx + 63)
    if #page == 0 then break end
    for j = 1, #page do
      local code, n = meta(page[j])
      local at = idx + j - 1
      if (len - at) <= maxMessages and (total - dropped) <= maxTokens then
        if code == 'u' or code == 's' then
          cut = {at, dropped}
          break
        end
        if fallback == nil and (code == 'a' or code == 'c') then fallback = {at, dropped} end
      end
      dropped = dropped + n
    end
    idx = idx + #page
  end
  cut = cut or fallback
  if cut then
    redis.call('LTRIM', list, cut[1], -1)
    total = total - cut[2]
    len = len - cut[1]
  else
    redis.call('DEL', list)
    len = 0
    total = 0
  end
end
-- The turn is never empty (the caller sends none), so an empty list is one the trim deleted.
if len > 0 then
  redis.call('SET', counter, total, 'EX', ttl)
  redis.call('EXPIRE', list, ttl)
  if summary then redis.call('EXPIRE', summary, ttl) end
else
  redis.call('DEL', counter)
end
return {total, len}
`);

/** One-letter role codes the trimming script understands (c = assistant with tool calls). */
function roleCode(message: ChatMessage): string {
  if (message.role === "assistant") return message.tool_calls?.length ? "c" : "a";
  return { user: "u", system: "s", tool: "t" }[message.role];
}

/** Encodes a message as a list element: `<role code><tokens>|<json>`. */
export function encodeHistoryElement(message: ChatMessage, tokens: number): string {
  // Pictures go to the model only: their bytes never reach Redis (the content keeps `[image: name]`).
  const stored =
    message.role === "user" && message.images
      ? { role: message.role, content: message.content, ...(message.name ? { name: message.name } : {}) }
      : message;
  return `${roleCode(message)}${Math.max(0, Math.ceil(tokens))}|${JSON.stringify(stored)}`;
}

/** Decodes a list element; undefined when it is not one of ours. */
export function decodeHistoryElement(element: string): ChatMessage | undefined {
  const bar = element.indexOf("|");
  if (bar < 0) return undefined;
  try {
    const value = JSON.parse(element.slice(bar + 1)) as { role?: unknown; content?: unknown };
    if (typeof value !== "object" || value === null || typeof value.content !== "string") return undefined;
    return ["user", "assistant", "tool", "system"].includes(value.role as string) ? (value as ChatMessage) : undefined;
  } catch {
    return undefined;
  }
}

/** Token count of a list element (the number after the role code). */
function elementTokens(element: string): number {
  const match = /^[a-z](\d+)\|/.exec(element);
  return match ? Number(match[1]) : 0;
}

/** The Redis store also tells each message's stored token count and list position. */
export interface StoredHistory extends HistoryStore {
  /** The messages with their stored token counts and list positions (the budget and the summariser read these). */
  loadStored(conversationKey: string): Promise<StoredMessage[]>;
}

/** Creates the Redis history store of one deployment. */
export function createHistoryStore(opts: {
  redis: Redis;
  prefix: string;
  maxMessages: number;
  maxTokens: number;
  ttlSeconds: number;
}): StoredHistory {
  const listKey = (ck: string): string => historyKeys(opts.prefix, ck).list;
  const decodeAll = (elements: string[]): ChatMessage[] =>
    repairToolPairs(elements.map(decodeHistoryElement).filter((m): m is ChatMessage => m !== undefined));

  return {
    async load(conversationKey) {
      return decodeAll(await opts.redis.lrange(listKey(conversationKey), 0, -1));
    },

    async loadWith(conversationKey, also) {
      const pipeline = opts.redis.pipeline().lrange(listKey(conversationKey), 0, -1);
      also.queue(pipeline);
      const results = await pipeline.exec();
      return {
        messages: decodeAll(pipelineReply(results, 0) as string[]),
        also: also.decode(pipelineReply(results, 1)),
      };
    },

    async loadStored(conversationKey) {
      const elements = await opts.redis.lrange(listKey(conversationKey), 0, -1);
      const stored = new Map<ChatMessage, StoredMessage>();
      elements.forEach((element, at) => {
        const message = decodeHistoryElement(element);
        if (message) stored.set(message, { message, tokens: elementTokens(element), at, element });
      });
      // The repair keeps the very objects it was given, so each kept message finds its count and place again.
      return repairToolPairs([...stored.keys()]).map((message) => stored.get(message) as StoredMessage);
    },

    async append(conversationKey, messages, appendOpts = {}) {
      if (messages.length === 0) return true;
      const elements = messages.map((m, i) =>
        encodeHistoryElement(m, appendOpts.tokens?.[i] ?? estimateMessageTokens(m)),
      );
      const keys = historyKeys(opts.prefix, conversationKey);
      const result = await APPEND.run(
        opts.redis,
        appendOpts.summary === false
          ? [keys.list, keys.tokens, keys.reset]
          : [keys.list, keys.tokens, keys.reset, keys.summary],
        [opts.maxMessages, opts.maxTokens, opts.ttlSeconds, appendOpts.askedAt ?? -1, ...elements],
      );
      if (!Array.isArray(result)) return false;
      const [total, length] = result as [number, number];
      appendOpts.onStored?.({ tokens: Number(total), messages: Number(length) });
      return true;
    },

    async reset(conversationKey, at = Date.now()) {
      // The marker outlives any answer still streaming (one day), so that answer is not stored afterwards.
      const keys = historyKeys(opts.prefix, conversationKey);
      await opts.redis
        .multi()
        .del(keys.list, keys.tokens, keys.summary)
        .set(keys.reset, String(at), "EX", 86_400)
        .exec();
    },
  };
}
