/**
 * Per-conversation ordering on top of BullMQ (the open-source edition has no groups).
 *
 * THE DESIGN
 * ----------
 * 1. One BullMQ job per message, jobId = jobIdFor(msg) (platform + chat + message id). A redelivered
 *    update maps to the same id. A dedupe marker `P:seen:<jobId>` (SET NX EX, about a day) also catches
 *    a redelivery that arrives after the job was answered and removed from BullMQ.
 *
 * 2. Each conversation has a Redis list `P:conv:<key>:order` of job ids in arrival order and a hash
 *    `P:conv:<key>:msgs` with their payloads. Only the HEAD of a conversation's list is ever in the BullMQ
 *    queue. Enqueueing is one Lua script (dedupe + RPUSH + HSET payload + "who is the head now?"),
 *    followed by `queue.add(head)`. `queue.add` with an existing jobId is a no-op, so adding the head
 *    again is always safe; a crash between the script and the add is repaired by the platform's
 *    redelivery (the script answers "already known", and the head is added again), by the next message
 *    of that conversation (every enqueue re-adds the current head), and by the workers' repair sweep
 *    over `P:pending` (conversations with a non-empty list), which also covers platforms that never
 *    redeliver.
 *
 * 3. A worker processes a job only while it is the head of its conversation. When it is done it runs one
 *    Lua script (LPOP if the head is this job, drop its payload, return the new head and its payload) and
 *    adds the new head to BullMQ. So a conversation has at most one job in BullMQ at a time: its messages
 *    run in arrival order, one at a time, whichever worker process picks them up; different
 *    conversations are independent jobs and run concurrently up to each worker's concurrency.
 *    Messages that arrive while the bot is answering simply wait in the list: nothing is rejected.
 *
 * 4. Crashes. The reply journal (`P:journal:<jobId>`) records the message ids a reply has sent and a
 *    `final` flag set once the answer (or the give-up notice) is complete. If a worker dies mid-job, the
 *    BullMQ lock expires and the stalled job is retried by another process with the same journal, so it
 *    edits the same messages. If it dies after `final` but before advancing, the retry sees `final` and
 *    only advances. If it dies after advancing, the retry sees it is no longer the head and only makes
 *    sure the head job exists. Ids only ever move towards the head and are never pushed again, so a
 *    stale `queue.add` can only resurrect an already-answered job, which then sees "not the head" and
 *    does nothing.
 *
 * 5. Failures never block a conversation: a job is retried with exponential backoff (our own counter
 *    the `failures` field of the job's journal, via BullMQ's moveToDelayed), the final failure runs `onGiveUp` (the user sees
 *    "model unavailable") and then advances like a success. A job BullMQ itself failed (e.g. it stalled
 *    too often) is given up on by the repair sweep.
 *
 * 6. Keys: all under KEY_PREFIX (BullMQ's `prefix` too), so deployments and test runs share a Redis.
 *    Use a hash-tagged prefix such as `{chatbot}` on Redis Cluster (see redis/keys.ts).
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
 * BullMQ options of every message job. Processing retries are the worker's own (moveToDelayed);
 * BullMQ's attempts only cover the runtime's own Redis calls failing. Nothing is kept once answered,
 * so an id can be added again later (a stale re-add is harmless, see 4. above).
 */
export const MESSAGE_JOB_OPTIONS = {
  attempts: 5,
  backoff: { type: "exponential", delay: 1000 },
  removeOnComplete: true,
  // Failed jobs are kept a while for inspection; the repair sweep advances past them.
  removeOnFail: { age: 7 * 24 * 3600, count: 1000 },
} as const;

/** The head of a conversation: the one job of it that may be in BullMQ. */
export interface ConversationHead {
  jobId: string;
  payload: string;
}

/** Outcome of offering a message to its conversation. */
export interface OfferResult {
  isNew: boolean;
  head: ConversationHead | undefined;
}

/** The ordering primitives shared by the enqueue side and the workers. */
export interface ConversationOrder {
  /** Dedupe + append to the conversation; then the head is (re-)added to BullMQ. */
  offer(message: InboundMessage, jobId: string): Promise<OfferResult>;
  /** Whether `jobId` is the head of its conversation (the only job allowed to run). */
  isHead(conversationKey: string, jobId: string): Promise<boolean>;
  /** Removes `jobId` if it is the head and puts the next message of the conversation into BullMQ. */
  advance(conversationKey: string, jobId: string): Promise<ConversationHead | undefined>;
  /** Makes sure the current head of the conversation is in BullMQ (idempotent). */
  ensureHead(conversationKey: string): Promise<ConversationHead | undefined>;
  /** Conversations with queued messages (bounded page, for the repair sweep). */
  pendingConversations(limit: number): Promise<string[]>;
}

/** Builds the ordering primitives over one Redis connection and one BullMQ queue. */
export function createConversationOrder(deps: {
  redis: Redis;
  keys: QueueKeys;
  queue: Queue;
  dedupeTtlSeconds: number;
  payloadTtlSeconds: number;
}): ConversationOrder {
  const { redis, keys, queue } = deps;

  async function addToBullmq(conversationKey: string, head: ConversationHead): Promise<void> {
    let data: unknown;
    try {
      data = JSON.parse(head.payload);
    } catch {
      // Only a hand-edited key can get here; the worker fails this job and advances past it.
      data = { conversationKey, unreadablePayload: head.payload.slice(0, 200) };
    }
    await queue.add(JOB_NAME, data, { ...MESSAGE_JOB_OPTIONS, jobId: head.jobId });
  }

  function parseHead(reply: unknown): ConversationHead | undefined {
    if (!Array.isArray(reply) || reply.length < 2) return undefined;
    const [jobId, payload] = reply as [unknown, unknown];
    return typeof jobId === "string" && typeof payload === "string" ? { jobId, payload } : undefined;
  }

  async function advanceOrEnsure(conversationKey: string, jobId: string): Promise<ConversationHead | undefined> {
    const reply = await ADVANCE.run(
      redis,
      [keys.order(conversationKey), keys.messages(conversationKey), keys.pending()],
      [jobId, conversationKey],
    );
    const head = parseHead(reply);
    if (head) await addToBullmq(conversationKey, head);
    return head;
  }

  return {
    async offer(message, jobId) {
      const ck = message.conversationKey;
      const reply = (await OFFER.run(
        redis,
        [keys.seen(jobId), keys.order(ck), keys.messages(ck), keys.pending()],
        [jobId, JSON.stringify(message), deps.dedupeTtlSeconds, deps.payloadTtlSeconds, ck],
      )) as [number, string?, string?];
      const [isNew, headId, headPayload] = reply;
      if (headId === undefined) return { isNew: isNew === 1, head: undefined };
      if (!headPayload) {
        // The head lost its payload (expired): skip it so the conversation cannot stay stuck.
        return { isNew: isNew === 1, head: await advanceOrEnsure(ck, "") };
      }
      const head = { jobId: headId, payload: headPayload };
      await addToBullmq(ck, head);
      return { isNew: isNew === 1, head };
    },

    async isHead(conversationKey, jobId) {
      return (await redis.lindex(keys.order(conversationKey), 0)) === jobId;
    },

    advance: advanceOrEnsure,

    ensureHead(conversationKey) {
      return advanceOrEnsure(conversationKey, "");
    },

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
