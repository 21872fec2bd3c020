/**
 * The rate gate shared by every worker process: one edit budget per chat and
 * one bot-wide budget per platform, kept in Redis and decided by Lua scripts
 * (one round trip per acquire when a slot is free).
 *
 * Per chat: grants at least `intervalFor(chatKey)` apart, whichever process and
 * conversation asks. Finals queue per chat (FIFO, with a lease so a dead process
 * cannot hold the chat) and while one waits no intermediate gets that chat.
 *
 * Bot-wide: GCRA buckets per platform, sized so that no window of 1 s (plus a
 * latency margin) holds more than `perSecond` grants. A final reserves its slot
 * ahead (a FIFO over all chats), which makes intermediates everywhere yield
 * until it has gone; intermediates also pass a slower bucket of their own
 * (`intermediateShare` of the rate), so finals always have headroom. The grants
 * as they really happen are counted too, so reservations that fell due together
 * (a process that stalled) still go out spaced. A chat only reserves bot-wide
 * slots once its own slot is free, so a slow chat never holds back another one:
 * nobody waits on another chat beyond the budget itself.
 *
 * Waiting is a timer for as long as the script says; a 429 (`backoff`) blocks
 * the chat for every process, and 429s in several chats of one platform at
 * once (Telegram does not say which limit it was) block the whole platform.
 * When Redis does not answer, slots come from the in-process gate (fail open:
 * replies keep their local pacing rather than freezing) and that is logged once.
 *
 * Keys (P = prefix, C = chat key, G = global key, both escaped like queue keys):
 *   P:rate:chat:C        hash: next (earliest next grant), headAt, seq, nf (finals queued), exp, fexp
 *                        (when this hash and the finals zset expire), lease:<waiter id>
 *   P:rate:finals:C      zset: finals waiting in this chat, in arrival order
 *   P:rate:global:G      hash: tat (reservations), act (real grants), tati (intermediates' bucket), blocked, exp
 *   P:rate:global:G:429  zset: chats that got a 429 lately (to recognise a bot-wide flood)
 */
import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import type { GlobalBudget } from "../contracts/platform-pacing.js";
import { rateKeys } from "../redis/keys.js";
import { redisScript } from "../redis/script.js";
import { createLocalRateGate, type RateGate, type RequestKind } from "./rate-gate.js";
import { abortableSleep } from "../shared/abortable-sleep.js";

export type { GlobalBudget };

/** One granted slot, for metrics and tests. */
export interface RateGrant {
  chatKey: string;
  kind: RequestKind;
  /** When the slot was granted (the gate's clock: Redis TIME unless `now` is given). */
  at: number;
  /** Time spent in acquire, in ms (local clock). */
  waitedMs: number;
  /** False when the slot came from the in-process fallback. */
  shared: boolean;
}

/** Options of the Redis-backed gate. */
export interface RedisRateGateOptions {
  redis: Redis;
  /** KEY_PREFIX of the deployment: every process with the same prefix shares the budgets. */
  prefix: string;
  /** Minimum time between two requests into one chat. */
  intervalFor(chatKey: string): number;
  /** The bot-wide budget a chat belongs to, or undefined for none. */
  globalFor?(chatKey: string): GlobalBudget | undefined;
  /** Clock in ms; default Redis TIME, so processes on different machines agree. */
  now?: () => number;
  /** Share of the bot-wide rate intermediates may use (default 0.6); the rest is kept for finals. */
  intermediateShare?: number;
  /** Grants allowed back to back before the bot-wide spacing applies (default 2). */
  globalBurst?: number;
  /** Slack added to the 1 s window for request latency (default 250 ms). */
  globalMarginMs?: number;
  /** A waiting final that has not called back this long after its wait is presumed dead (default 5 s). */
  leaseMs?: number;
  /** 429s in this many different chats of one platform within `globalFloodWindowMs` mean a bot-wide flood (default 3). */
  globalFloodChats?: number;
  /** See `globalFloodChats` (default 1 s). */
  globalFloodWindowMs?: number;
  /** A Redis call slower than this falls back to local pacing (default 2 s). */
  commandTimeoutMs?: number;
  /** Told once when the gate falls back to local pacing, and once when Redis is back. */
  logger?: { warn(obj: object, msg?: string): void; info(obj: object, msg?: string): void };
  /** Called for every granted slot. */
  onGrant?(grant: RateGrant): void;
}

/**
 * Shared Lua helpers. Every key lives at least KEEP past the latest time it holds. Rather than a
 * PTTL and a PEXPIRE on every call, a hash notes its own expiry (field `exp`; the chat hash also notes
 * its finals zset's, `fexp`) and the expiry is pushed out a further KEEP whenever it falls short, so a
 * busy chat renews it about once a minute. The chat hash always outlives its finals zset, so its count
 * of queued finals (`nf`) cannot outlive the zset's members unnoticed.
 */
const CLOCK = `
local KEEP = 60000
local function clock(arg)
  if arg ~= '' then return tonumber(arg) end
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
-- The new expiry (absolute) when the key, expiring at exp, must live until untilAt; nil when it already does.
local function pushOut(exp, untilAt)
  if exp >= untilAt then return nil end
  return untilAt + KEEP
end
local function expireAt(key, at, now)
  redis.call('PEXPIRE', key, math.max(1, math.ceil(at - now)))
end
local function extend(key, ms)
  ms = math.ceil(ms)
  if redis.call('PTTL', key) < ms then redis.call('PEXPIRE', key, ms) end
end
`;

/**
 * KEYS: chat hash, finals zset, [global hash]
 * ARGV: now|'', kind, interval, waiter id, ticket|'', T, tau, Ti, taui, leaseMs
 * Returns {1, now} (granted) or {0, waitMs, ticket|-1}.
 */
const ACQUIRE = `${CLOCK}
local now = clock(ARGV[1])
local final = ARGV[2] == 'final'
local interval = tonumber(ARGV[3])
local id = ARGV[4]
local ticket = tonumber(ARGV[5])
local T, tau, Ti, taui = tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8]), tonumber(ARGV[9])
local leaseMs = tonumber(ARGV[10])
local chat, finals, global = KEYS[1], KEYS[2], KEYS[3]

local st = redis.call('HMGET', chat, 'next', 'headAt', 'nf', 'exp', 'fexp')
local nextAt = tonumber(st[1]) or 0
local headAt = tonumber(st[2]) or 0
local storedNf = tonumber(st[3]) or 0
local exp = tonumber(st[4]) or 0
local fexp = tonumber(st[5]) or 0

-- Chat fields written once, at the end (with the expiry when it moves).
local writes = {}
local function put(field, value) writes[#writes + 1] = field; writes[#writes + 1] = value end
local nf = 0
local function saveChat(untilAt)
  if nf ~= storedNf then put('nf', nf) end
  local newExp = pushOut(exp, untilAt)
  if newExp then put('exp', newExp) end
  if #writes > 0 then redis.call('HSET', chat, unpack(writes)) end
  if newExp then expireAt(chat, newExp, now) end
end

-- Finals of a process that died while waiting must not hold the chat for ever. Only looked at when
-- some are queued: the count in the chat hash says so without a round trip to the zset.
if storedNf > 0 then
  for _, m in ipairs(redis.call('ZRANGE', finals, 0, -1)) do
    local lease = tonumber(redis.call('HGET', chat, 'lease:' .. m))
    if lease == nil or lease < now then
      redis.call('ZREM', finals, m)
      redis.call('HDEL', chat, 'lease:' .. m)
    else
      nf = nf + 1
    end
  end
end
local live = nf

-- tat: reservations (the order finals go in; intermediates are charged here too, so finals queue
-- behind what was really used); act: the grants as they really happen, which is what the platform
-- counts (a reservation used late, e.g. by a process that stalled, must not crowd a window).
-- Read only when a decision needs it.
local tat, tati, act, gblocked, gexp = 0, 0, 0, 0, 0
local globalRead, globalDirty = false, false
local function readGlobal()
  if globalRead or not global then return end
  globalRead = true
  local g = redis.call('HMGET', global, 'tat', 'tati', 'act', 'blocked', 'exp')
  tat, tati, act, gblocked, gexp = tonumber(g[1]) or 0, tonumber(g[2]) or 0, tonumber(g[3]) or 0, tonumber(g[4]) or 0, tonumber(g[5]) or 0
end
local function saveGlobal()
  if not globalDirty then return end
  local newExp = pushOut(gexp, math.max(tat, tati, act, gblocked) + KEEP)
  if newExp then
    redis.call('HSET', global, 'tat', tat, 'tati', tati, 'act', act, 'exp', newExp)
    expireAt(global, newExp, now)
  else
    redis.call('HSET', global, 'tat', tat, 'tati', tati, 'act', act)
  end
end

local function grant()
  put('next', now + interval)
  saveGlobal()
  saveChat(now + interval + KEEP)
  return {1, now}
end

if final then
  if redis.call('ZSCORE', finals, id) == false then
    -- An empty queue is a new zset, without an expiry whatever fexp still says.
    if nf == 0 then fexp = 0 end
    local seq = redis.call('HINCRBY', chat, 'seq', 1)
    redis.call('ZADD', finals, seq, id)
    nf = nf + 1
    live = live + 1
  end
  local rank = redis.call('ZRANK', finals, id)
  local function grantFinal()
    redis.call('ZREM', finals, id)
    nf = nf - 1
    redis.call('HDEL', chat, 'lease:' .. id, 'headAt')
    return grant()
  end
  local wait, keep = 0, -1
  if rank > 0 then
    -- Behind other finals of this chat: look again about when our turn should come.
    wait = math.max(10, math.max(nextAt, headAt, now) - now + rank * interval)
  elseif nextAt > now then
    wait = nextAt - now
    if ticket then keep = ticket end
  elseif not global then
    return grantFinal()
  else
    readGlobal()
    if ticket == nil or gblocked > now then
      -- Reserve the next bot-wide slot (FIFO over all chats' finals; intermediates yield until it passed).
      ticket = math.max(now, tat - tau, gblocked)
      tat = math.max(tat, ticket) + T
      globalDirty = true
    end
    if ticket > now then
      wait = ticket - now
    elseif act - tau > now then
      -- Its time has come, but late: reservations that fell due together still go out spaced.
      wait = act - tau - now
    else
      act = math.max(act, now) + T
      globalDirty = true
      return grantFinal()
    end
    keep = ticket
  end
  saveGlobal()
  put('lease:' .. id, now + wait + leaseMs)
  if rank == 0 then put('headAt', now + wait) end
  -- The finals zset lives as long as the waiters' leases, and the chat hash at least as long as the zset.
  local untilAt = now + wait + leaseMs + KEEP
  local newFexp = pushOut(fexp, untilAt)
  if newFexp then
    put('fexp', newFexp)
    expireAt(finals, newFexp, now)
    untilAt = math.max(untilAt, newFexp)
  end
  saveChat(untilAt)
  return {0, math.max(1, math.ceil(wait)), keep}
end

-- An intermediate.
if live > 0 then
  -- A final waits for this chat: it goes first.
  saveChat(0)
  return {0, math.ceil(math.max(10, math.max(nextAt, headAt, now) - now + live * interval)), ticket or -1}
end
if nextAt > now then
  saveChat(0)
  return {0, math.ceil(nextAt - now), ticket or -1}
end
if not global then return grant() end
readGlobal()
if ticket == nil or gblocked > now then
  -- A place in the intermediates' own (slower) bucket, never inside time finals have reserved. A late
  -- caller keeps its place: the shared bucket is charged when the slot is granted, below.
  ticket = math.max(now, tati - taui, tat - tau, gblocked)
  tati = math.max(tati, ticket) + Ti
  globalDirty = true
end
local waitFor = 0
if ticket > now then waitFor = ticket - now
elseif tat - tau > now then waitFor = tat - tau - now
elseif act - tau > now then waitFor = act - tau - now
end
if waitFor > 0 then
  saveGlobal()
  saveChat(0)
  return {0, math.ceil(waitFor), ticket}
end
tat = math.max(tat, now) + T
act = math.max(act, now) + T
globalDirty = true
return grant()
`;

/**
 * KEYS: chat hash, [global hash, recent-429 zset]
 * ARGV: now|'', retryAfterMs, chat key, flood window ms, flood chats
 */
const BACKOFF = `${CLOCK}
local now = clock(ARGV[1])
local upto = now + tonumber(ARGV[2])
local chat, global, recent = KEYS[1], KEYS[2], KEYS[3]
local st = redis.call('HMGET', chat, 'next', 'exp')
local newExp = pushOut(tonumber(st[2]) or 0, upto + KEEP)
if upto > (tonumber(st[1]) or 0) then
  if newExp then redis.call('HSET', chat, 'next', upto, 'exp', newExp) else redis.call('HSET', chat, 'next', upto) end
elseif newExp then
  redis.call('HSET', chat, 'exp', newExp)
end
if newExp then expireAt(chat, newExp, now) end
if global then
  local window = tonumber(ARGV[4])
  redis.call('ZADD', recent, now, ARGV[3])
  redis.call('ZREMRANGEBYSCORE', recent, '-inf', now - window)
  extend(recent, window * 2)
  if redis.call('ZCARD', recent) >= tonumber(ARGV[5]) then
    local g = redis.call('HMGET', global, 'blocked', 'exp')
    local gExp = pushOut(tonumber(g[2]) or 0, upto + KEEP)
    if upto > (tonumber(g[1]) or 0) then redis.call('HSET', global, 'blocked', upto) end
    if gExp then
      redis.call('HSET', global, 'exp', gExp)
      expireAt(global, gExp, now)
    end
  end
end
return upto
`;

/**
 * A final that gave up waiting leaves its chat's queue (and the queue's count).
 * KEYS: chat hash, finals zset · ARGV: waiter id
 */
const LEAVE = `
if redis.call('ZREM', KEYS[2], ARGV[1]) == 1 then
  local nf = tonumber(redis.call('HGET', KEYS[1], 'nf')) or 0
  if nf > 0 then redis.call('HSET', KEYS[1], 'nf', nf - 1) end
end
redis.call('HDEL', KEYS[1], 'lease:' .. ARGV[1])
return 1
`;

const acquireScript = redisScript(ACQUIRE);
const backoffScript = redisScript(BACKOFF);
const leaveScript = redisScript(LEAVE);

/** GCRA parameters of a bot-wide budget. */
interface BucketTiming {
  T: number;
  tau: number;
  Ti: number;
  taui: number;
}

/** Chats whose local wait is remembered before the expired ones are swept (bounded memory). */
const MAX_QUIET_CHATS = 1024;
/** Slack on a local wait, so the request after it reaches Redis after the time Redis holds (round trips differ by a little). */
const QUIET_MARGIN_MS = 2;

/** Redis did not answer in time. */
class GateTimeoutError extends Error {
  override readonly name = "GateTimeoutError";
}

/** A gate shared through Redis by every process with the same prefix (see the module comment). */
export function createRedisRateGate(opts: RedisRateGateOptions): Required<RateGate> {
  const { redis, prefix } = opts;
  const share = opts.intermediateShare ?? 0.6;
  const burst = Math.max(1, Math.floor(opts.globalBurst ?? 2));
  const marginMs = opts.globalMarginMs ?? 250;
  const windowMs = 1000 + marginMs;
  const leaseMs = opts.leaseMs ?? 5000;
  const floodChats = opts.globalFloodChats ?? 3;
  const floodWindowMs = opts.globalFloodWindowMs ?? 1000;
  const timeoutMs = opts.commandTimeoutMs ?? 2000;
  const clock = () => (opts.now ? String(Math.round(opts.now())) : "");
  const local = createLocalRateGate({ minIntervalMs: (key) => opts.intervalFor(key), ...(opts.now ? { now: opts.now } : {}) });

  const keys = rateKeys(prefix);
  const chatHash = keys.chat;
  const finalsSet = keys.finals;
  const globalHash = keys.global;

  const timings = new Map<number, BucketTiming>();
  /** At most `perSecond` grants in any window of `windowMs`: floor(W/T) + burst ≤ perSecond. */
  const timingFor = (perSecond: number): BucketTiming => {
    let t = timings.get(perSecond);
    if (!t) {
      const T = Math.ceil(windowMs / Math.max(1, perSecond - burst));
      const Ti = Math.ceil(T / Math.min(1, Math.max(0.05, share)));
      t = { T, tau: (burst - 1) * T, Ti, taui: 0 };
      timings.set(perSecond, t);
    }
    return t;
  };

  let down = false;
  /** Ready, or still coming up for the first time (commands queue until it is); a lost connection means local pacing at once. */
  const usable = () => {
    if (redis.status === "ready") return true;
    if (!down && (redis.status === "wait" || redis.status === "connecting" || redis.status === "connect")) return true;
    markDown(new Error(`Redis connection is ${redis.status}`));
    return false;
  };
  const markDown = (error: unknown) => {
    if (down) return;
    down = true;
    opts.logger?.warn({ err: error }, "shared rate gate unavailable: pacing replies in this process only");
  };
  const markUp = () => {
    if (!down) return;
    down = false;
    opts.logger?.info({}, "shared rate gate available again");
  };

  /** A Redis call bounded in time and by the signal. */
  const call = <T>(run: () => Promise<T>, signal?: AbortSignal): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const onAbort = () => finish(() => reject(signal?.reason));
      const timer = setTimeout(() => finish(() => reject(new GateTimeoutError(`no answer from Redis within ${timeoutMs} ms`))), timeoutMs);
      let done = false;
      const finish = (settle: () => void) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        settle();
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      run().then(
        (value) => finish(() => resolve(value)),
        (error: unknown) => finish(() => reject(error)),
      );
    });


  /** A final that gave up waiting leaves the chat's queue now rather than when its lease runs out. */
  const leaveQueue = (chatKey: string, id: string, inflight: Promise<unknown> | undefined) => {
    // After a call still on its way, which may (re-)register the waiter.
    void (inflight ?? Promise.resolve())
      .catch(() => undefined)
      .then(async () => {
        if (redis.status !== "ready") return; // its lease expires by itself
        await leaveScript.run(redis, [chatHash(chatKey), finalsSet(chatKey)], [id]);
      })
      .catch((error: unknown) => opts.logger?.warn({ err: error }, "could not remove an aborted waiter from the rate gate"));
  };

  /**
   * Per chat, the local time before which Redis would refuse this process's intermediates anyway: its own
   * last request's completion plus the interval (`settled`), or a 429's block. An intermediate waits that out
   * here rather than asking Redis only to be told to wait and ask again (a second round trip per request,
   * as the editors space requests from their start). Finals still go to Redis at once: they must queue there
   * so that other processes' intermediates yield to them.
   */
  const quiet = new Map<string, number>();
  const localNow = opts.now ?? Date.now;
  const quietUntil = (chatKey: string, until: number) => {
    if (quiet.size >= MAX_QUIET_CHATS) {
      const t = localNow();
      for (const [key, at] of quiet) if (at <= t) quiet.delete(key);
    }
    quiet.set(chatKey, Math.max(quiet.get(chatKey) ?? until, until));
  };
  const quietWait = (chatKey: string): number => {
    const until = quiet.get(chatKey);
    if (until === undefined) return 0;
    const ms = until - localNow();
    if (ms <= 0) quiet.delete(chatKey);
    return ms;
  };

  const fallback = async (chatKey: string, kind: RequestKind, startedAt: number, signal?: AbortSignal) => {
    await local.acquire(chatKey, kind, signal);
    opts.onGrant?.({ chatKey, kind, at: opts.now?.() ?? Date.now(), waitedMs: Date.now() - startedAt, shared: false });
  };

  return {
    async acquire(chatKey, kind, signal) {
      if (signal?.aborted) throw signal.reason;
      const startedAt = Date.now();
      const id = randomUUID();
      const budget = opts.globalFor?.(chatKey);
      const timing = budget ? timingFor(budget.perSecond) : { T: 0, tau: 0, Ti: 0, taui: 0 };
      const keys = [chatHash(chatKey), finalsSet(chatKey), ...(budget ? [globalHash(budget.key)] : [])];
      let ticket: number | undefined;
      let inflight: Promise<unknown> | undefined;
      try {
        if (kind === "intermediate") {
          const ms = quietWait(chatKey);
          if (ms > 0) await abortableSleep(ms + QUIET_MARGIN_MS, signal);
        }
        for (;;) {
          if (!usable()) return await fallback(chatKey, kind, startedAt, signal);
          let reply: [number, number, number];
          try {
            const args = [clock(), kind, Math.max(0, Math.ceil(opts.intervalFor(chatKey))), id, ticket ?? "", timing.T, timing.tau, timing.Ti, timing.taui, leaseMs];
            inflight = acquireScript.run(redis, keys, args);
            const running = inflight;
            reply = (await call(() => running, signal)) as [number, number, number];
          } catch (error) {
            if (signal?.aborted) throw signal.reason;
            markDown(error);
            return await fallback(chatKey, kind, startedAt, signal);
          }
          markUp();
          if (reply[0] === 1) {
            opts.onGrant?.({ chatKey, kind, at: reply[1], waitedMs: Date.now() - startedAt, shared: true });
            return;
          }
          ticket = reply[2] >= 0 ? reply[2] : undefined;
          await abortableSleep(Math.max(1, reply[1]), signal);
        }
      } catch (error) {
        if (kind === "final") leaveQueue(chatKey, id, inflight);
        throw error;
      }
    },

    settled(chatKey) {
      local.settled(chatKey);
      if (!usable()) return;
      // "No request before now + interval" for this chat: the same update as a 429's block, chat only.
      const interval = Math.max(0, Math.ceil(opts.intervalFor(chatKey)));
      quietUntil(chatKey, localNow() + interval);
      call(() => backoffScript.run(redis, [chatHash(chatKey)], [clock(), interval, chatKey, floodWindowMs, floodChats])).then(markUp, markDown);
    },

    backoff(chatKey, retryAfterMs) {
      // The local gate learns it too, so pacing stays right if Redis goes away next.
      local.backoff(chatKey, retryAfterMs);
      quietUntil(chatKey, localNow() + Math.max(0, retryAfterMs));
      if (!usable()) return;
      const budget = opts.globalFor?.(chatKey);
      const keys = [chatHash(chatKey), ...(budget ? [globalHash(budget.key), `${globalHash(budget.key)}:429`] : [])];
      call(() => backoffScript.run(redis, keys, [clock(), Math.max(0, Math.ceil(retryAfterMs)), chatKey, floodWindowMs, floodChats])).then(markUp, markDown);
    },
  };
}
