/**
 * Per-conversation ordering on top of BullMQ (the open-source edition has no groups).
 *
 * - One job per message, jobId = jobIdFor(msg), so a redelivered update maps to the same id; the dedupe
 *   marker `P:seen:<jobId>` (about a day) also catches a redelivery after the job was answered and removed.
 * - Each conversation has a list `P:conv:<key>:order` of job ids in arrival order and a hash
 *   `P:conv:<key>:msgs` of payloads. Only the list's HEAD is ever in BullMQ, so a conversation runs one
 *   message at a time, in order, on whichever worker; other conversations run concurrently. Enqueueing is
 *   one script (dedupe + RPUSH + HSET + "who is the head?") then `queue.add(head)`, a no-op for a known id.
 *   A crash between the two is repaired by a redelivery, by the conversation's next message (every enqueue
 *   re-adds the head), and by the workers' sweep over `P:pending` (for platforms that never redeliver).
 * - A job runs only while it is the head; when done, one script pops it and returns the next head to add.
 * - Crashes: the reply journal (`P:journal:<jobId>`) holds the sent message ids and a `final` flag, so a
 *   stalled job retried elsewhere edits the same messages; after `final` a retry only advances; after
 *   advancing it sees "not the head" and only ensures the head exists. Ids move only towards the head and
 *   are never pushed again, so a stale `queue.add` can only resurrect an answered job, which does nothing.
 * - Failures never block a conversation: retries with backoff count in the journal's `failures` (via
 *   moveToDelayed); the last one runs `onGiveUp` and advances like a success. A job BullMQ failed by
 *   itself (stalled too often) is given up on by the repair sweep.
 * - All keys are under KEY_PREFIX (BullMQ's too); use a hash-tagged prefix such as `{chatbot}` on a Cluster.
 */
import type { Queue } from "bullmq";
import type { Redis } from "ioredis";
import type { InboundMessage } from "../contracts/inbound-message.js";
import { JOB_NAME, type QueueKeys } from "../redis/keys.js";
import { redisScript } from "../redis/script.js";

// KEYS: seen, order, msgs, pending. ARGV: jobId, payload, dedupeTtl, payloadTtl, conversationKey.
// Returns {isNew, head?, headPayload?} ('' when the head's payload is missing).
const OFFER = redisScript(`
local isNew = 0
if redis.call('SET', KEYS[1], '1', 'NX', 'EX', tonumber(ARGV[3])) then
  isNew = 1
  redis.call('HSET', KEYS[3], ARGV[1], ARGV[2])
  local queued = redis.call('RPUSH', KEYS[2], ARGV[1])
  redis.call('SADD', KEYS[4], ARGV[5])
  redis.call('EXPIRE', KEYS[2], tonumber(ARGV[4]))
  redis.call('EXPIRE', KEYS[3], tonumber(ARGV[4]))
  -- Alone in the conversation's order (the usual case): it is the head.
  if queued == 1 then return {1, ARGV[1], ARGV[2]} end
end
local head = redis.call('LINDEX', KEYS[2], 0)
if not head then return {isNew} end
local payload = redis.call('HGET', KEYS[3], head)
return {isNew, head, payload or ''}
`);

// KEYS: order, msgs, pending. ARGV: jobId ('' = pop nothing), conversationKey.
// Pops the job if it is the head, skips heads whose payload vanished, returns {head, payload} or {}.
const ADVANCE = redisScript(`
local head, known = nil, false
if ARGV[1] ~= '' then
  -- Usually the head: pop it, and put back what was not. Its payload goes with the hash when it was the
  -- last one (the usual case: no HDEL then).
  local popped = redis.call('LPOP', KEYS[1])
  if popped == ARGV[1] then
    head, known = redis.call('LINDEX', KEYS[1], 0), true
    if head then redis.call('HDEL', KEYS[2], ARGV[1]) end
  elseif popped then redis.call('LPUSH', KEYS[1], popped) end
end
while true do
  if not known then head = redis.call('LINDEX', KEYS[1], 0) end
  known = false
  if not head then
    redis.call('DEL', KEYS[2])
    redis.call('SREM', KEYS[3], ARGV[2])
    return {}
  end
  local payload = redis.call('HGET', KEYS[2], head)
  if payload then return {head, payload} end
  redis.call('LPOP', KEYS[1])
end
`);

/**
 * BullMQ options of every message job. Processing retries are the worker's own; BullMQ's attempts only
 * cover the runtime's Redis calls. Nothing is kept once answered, so a stale re-add is harmless.
 */
export const MESSAGE_JOB_OPTIONS = {
  attempts: 5,
  backoff: { type: "exponential", delay: 1000 },
  removeOnComplete: true,
  // Failed jobs are kept a while for inspection; the repair sweep advances past them.
  removeOnFail: { age: 7 * 24 * 3600, count: 1000 },
} as const;

/** Lifetime of the dedupe marker: a redelivery within a day is recognised. */
const DEDUPE_TTL_SECONDS = 24 * 3600;
/** Lifetime of a queued, not yet answered payload. */
const PAYLOAD_TTL_SECONDS = 7 * 24 * 3600;

/** The ordering primitives shared by the enqueue side and the workers. */
export interface ConversationOrder {
  /** Dedupe + append to the conversation; then the head is (re-)added to BullMQ. */
  offer(message: InboundMessage, jobId: string): Promise<{ isNew: boolean }>;
  /** Whether `jobId` is the head of its conversation (the only job allowed to run). */
  isHead(conversationKey: string, jobId: string): Promise<boolean>;
  /** Removes `jobId` if it is the head and puts the next message of the conversation into BullMQ. */
  advance(conversationKey: string, jobId: string): Promise<void>;
  /** Makes sure the current head of the conversation is in BullMQ (idempotent). */
  ensureHead(conversationKey: string): Promise<void>;
  /** Conversations with queued messages (bounded page, for the repair sweep). */
  pendingConversations(limit: number): Promise<string[]>;
}

/** Builds the ordering primitives over one Redis connection and one BullMQ queue. */
export function createConversationOrder({
  redis,
  keys,
  queue,
}: {
  redis: Redis;
  keys: QueueKeys;
  queue: Queue;
}): ConversationOrder {
  async function addToBullmq(conversationKey: string, jobId: string, payload: string): Promise<void> {
    let data: unknown;
    try {
      data = JSON.parse(payload);
    } catch {
      // Only a hand-edited key can get here; the worker fails this job and advances past it.
      data = { conversationKey, unreadablePayload: payload.slice(0, 200) };
    }
    await queue.add(JOB_NAME, data, { ...MESSAGE_JOB_OPTIONS, jobId });
  }

  async function advanceOrEnsure(conversationKey: string, jobId: string): Promise<void> {
    const [headId, payload] = (await ADVANCE.run(
      redis,
      [keys.order(conversationKey), keys.messages(conversationKey), keys.pending()],
      [jobId, conversationKey],
    )) as unknown[];
    if (typeof headId === "string" && typeof payload === "string") await addToBullmq(conversationKey, headId, payload);
  }

  return {
    async offer(message, jobId) {
      const ck = message.conversationKey;
      const [added, headId, headPayload] = (await OFFER.run(
        redis,
        [keys.seen(jobId), keys.order(ck), keys.messages(ck), keys.pending()],
        [jobId, JSON.stringify(message), DEDUPE_TTL_SECONDS, PAYLOAD_TTL_SECONDS, ck],
      )) as [number, string?, string?];
      if (headId !== undefined && headPayload) await addToBullmq(ck, headId, headPayload);
      // The head lost its payload (expired): skip it so the conversation cannot stay stuck.
      else if (headId !== undefined) await advanceOrEnsure(ck, "");
      return { isNew: added === 1 };
    },
    async isHead(conversationKey, jobId) {
      return (await redis.lindex(keys.order(conversationKey), 0)) === jobId;
    },
    advance: advanceOrEnsure,
    ensureHead: (conversationKey) => advanceOrEnsure(conversationKey, ""),

    async pendingConversations(limit) {
      const found = new Set<string>();
      let cursor = "0";
      // Bounded: at most `limit` members per sweep, and SSCAN pages of 200.
      do {
        const [next, members] = await redis.sscan(keys.pending(), cursor, "COUNT", 200);
        cursor = next;
        for (const m of members) if (found.size < limit) found.add(m);
      } while (cursor !== "0" && found.size < limit);
      return [...found];
    },
  };
}
