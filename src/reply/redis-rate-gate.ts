/**
 * The rate gate shared by every worker process: one edit budget per chat and
 * one bot-wide budget per platform, kept in Redis and decided by Lua scripts
 * (one round trip per request), except lanes paced in the process (see shares below).
 *
 * Per chat: grants at least `intervalFor(chatKey)` apart, whichever process and
 * conversation asks. A final is granted in one round trip for the time its turn comes, and waits for it
 * in its process: the chat's next slot is already past it, so intermediates asking meanwhile (in any
 * process) come after it, and a second final in the chat comes one interval after the first (finals go
 * in arrival order). A final whose wait is aborted gives its slot back (UNGRANT); one whose process died
 * holds the chat no longer than its own slot.
 *
 * Bot-wide: GCRA buckets per platform, sized so that no window of 1 s (plus a
 * latency margin) holds more than `perSecond` grants. A final reserves its slot
 * ahead (a FIFO over all chats), which makes intermediates everywhere yield
 * until it has gone; intermediates also pass a slower bucket of their own
 * (`intermediateShare` of the rate), so finals always have headroom. The grants
 * as they really happen are counted too (`act`), and a final whose process wakes
 * for it later than a latency margin asks again, so grants used late do not go out
 * bunched. A chat's final only reserves bot-wide time from when its chat is free,
 * so a slow chat never holds back another one: nobody waits on another chat beyond
 * the budget itself.
 *
 * Shares: a lane whose every request is an intermediate (Telegram drafts, `processShareFor`) asks Redis
 * nothing per request. Each process streams its chats there at their interval and, all together, at its
 * share of the lane's bot-wide budget, agreed with the other processes a few times a second while it
 * streams (budget-share.ts, share-lane.ts). A chat's requests there come from the one process answering
 * it, and no final queues behind them, so there is nothing to order across processes per request.
 *
 * Waiting is a timer for as long as the script says; a 429 (`backoff`) blocks
 * the chat for every process, and 429s in several chats of one platform at
 * once (Telegram does not say which limit it was) block the whole platform.
 * When Redis does not answer, slots come from the in-process gate (fail open:
 * replies keep their local pacing rather than freezing) and that is logged once.
 *
 * Keys (P = prefix, C = chat key, G = global key, both escaped like queue keys), each state one string of
 * '|'-joined fields, so a script reads a chat's and its budget's in one MGET and writes each with one SET:
 *   P:rate:c:C        next (earliest next grant) | exp (when the key expires) | two fields no longer used (the
 *                     holder of credits in earlier versions) | blk (until when its last 429 blocked it)
 *   P:rate:g:G        tat (reservations) | tati (intermediates' bucket) | act (real grants) | blocked | exp
 *   P:rate:g:G:429    zset: chats that got a 429 lately (to recognise a bot-wide flood)
 *   P:rate:s:G        hash: each process's share of budget G, for lanes paced in the process (budget-share.ts)
 */
import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import type { GlobalBudget } from "../contracts/platform-pacing.js";
import { rateKeys } from "../redis/keys.js";
import { redisScript } from "../redis/script.js";
import { ACQUIRE, BACKOFF, RELEASE, UNGRANT } from "./redis-rate-gate-lua.js";
import { createLocalRateGate, type RateGate, type RequestKind } from "./rate-gate.js";
import { createBudgetShare } from "./budget-share.js";
import { createShareLane, type ShareLane } from "./share-lane.js";
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
  /** The gate's clock in ms; default Redis TIME (read every few seconds, see gateClockOf), so processes on different machines agree. */
  now?: () => number;
  /** This process's own clock (default Date.now), which the gate's clock is read against: for tests of a host whose clock is off. */
  processClock?: () => number;
  /** Share of the bot-wide rate intermediates may use (default 0.6); the rest is kept for finals. */
  intermediateShare?: number;
  /** Grants allowed back to back before the bot-wide spacing applies (default 2). */
  globalBurst?: number;
  /** Slack added to the 1 s window for request latency (default 250 ms). */
  globalMarginMs?: number;
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
  /**
   * Pacing keys whose lane is paced in each process at its share of the lane's bot-wide budget, with no round
   * trip per request (default none): only lanes whose every request is an intermediate and whose chat is
   * streamed by one process at a time (Telegram drafts). A lane whose budget finals share must queue in Redis.
   */
  processShareFor?(chatKey: string): boolean;
}

const acquireScript = redisScript(ACQUIRE);
const backoffScript = redisScript(BACKOFF);
const ungrantScript = redisScript(UNGRANT);
const releaseScript = redisScript(RELEASE);

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

/** At most `perSecond` grants in any window of `windowMs`: floor(W/T) + burst ≤ perSecond (memoised per rate). */
function bucketTimings(windowMs: number, burst: number, defaultShare: number): (budget: GlobalBudget) => BucketTiming {
  const timings = new Map<string, BucketTiming>();
  return (budget) => {
    const share = budget.intermediateShare ?? defaultShare;
    const memo = `${budget.perSecond}:${share}`;
    let t = timings.get(memo);
    if (!t) {
      // Exact, not rounded up to whole ms: the scripts keep fractional bucket times and grant whole ms.
      const T = windowMs / Math.max(1, budget.perSecond - burst);
      const Ti = T / Math.min(1, Math.max(0.05, share));
      // The intermediates' own bucket lets two go back to back too (else one asking within Ti of the last
      // takes a second round trip for a wait of a few ms); the bot-wide bucket (T, tau) bounds every window.
      t = { T, tau: (burst - 1) * T, Ti, taui: Ti };
      timings.set(memo, t);
    }
    return t;
  };
}

/** A Redis call bounded in time and by the signal. */
function boundedCall(timeoutMs: number): <T>(run: () => Promise<T>, signal?: AbortSignal) => Promise<T> {
  return <T>(run: () => Promise<T>, signal?: AbortSignal) =>
    new Promise<T>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const onAbort = () => finish(() => reject(signal?.reason));
      const timer = setTimeout(
        () => finish(() => reject(new GateTimeoutError(`no answer from Redis within ${timeoutMs} ms`))),
        timeoutMs,
      );
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
}

/**
 * Per chat, the local time before which Redis would refuse this process's requests anyway: its own
 * last request's completion plus the interval (`settled`), or a 429's block. An intermediate waits that out
 * here rather than asking Redis only to be told to wait and ask again (a second round trip per request,
 * as the editors space requests from their start). Finals go to Redis at once and tell it this time:
 * they must queue there so that other processes' intermediates yield to them.
 */
function quietBook(localNow: () => number) {
  const quiet = new Map<string, number>();
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
  return { quiet, quietUntil, quietWait };
}

/** How often a process re-reads Redis's clock: one TIME per process per this, instead of one inside every script. */
const CLOCK_SYNC_MS = 10_000;
/** A reading whose round trip took longer says too little about when Redis read its clock (this clock may run ahead by up to it). */
const CLOCK_MAX_RTT_MS = 10;
/** The quickest round trip seen is forgotten after this long, so a clock that drifted or was stepped is followed. */
const CLOCK_REBASE_MS = 60_000;

/**
 * The gate's clock (Redis TIME, so processes on different machines agree) as this process's clock plus an
 * offset, read from a TIME round trip every CLOCK_SYNC_MS: the scripts get `now` as an argument and run no
 * TIME of their own. Until a reading good enough has come (a fresh process, a slow link) `now()` is
 * undefined and the scripts read Redis's clock themselves. A reading counts when its round trip was
 * quick (CLOCK_MAX_RTT_MS, and not much slower than the quickest seen lately): a slow one (event-loop lag,
 * a queue in front of Redis) says little about when Redis read its clock. The reading is taken as of when
 * it was sent, so this clock runs at most one such round trip ahead of Redis's and never behind it: a
 * request that a script told to wait until some time is not told to wait again when it comes back then.
 */
function gateClockOf(redis: Redis, localNow: () => number) {
  let offset: number | undefined;
  let bestRttMs = Infinity;
  let bestAt = -Infinity;
  let lastSyncAt = -Infinity;
  let syncing = false;
  const learn = (gateNow: number, sentAt: number, receivedAt: number) => {
    const rtt = receivedAt - sentAt;
    if (rtt > CLOCK_MAX_RTT_MS) return;
    if (receivedAt - bestAt > CLOCK_REBASE_MS) bestRttMs = Infinity;
    if (rtt > bestRttMs * 1.5 + 2) return;
    if (rtt <= bestRttMs) {
      bestRttMs = rtt;
      bestAt = receivedAt;
    }
    // TIME's microseconds are cut to whole milliseconds: one more keeps the reading from lagging behind.
    offset = gateNow + 1 - sentAt;
  };
  const sync = () => {
    if (syncing || redis.status !== "ready") return;
    syncing = true;
    lastSyncAt = localNow();
    const sentAt = lastSyncAt;
    redis
      .time()
      .then(([seconds, micros]) =>
        learn(Number(seconds) * 1000 + Math.floor(Number(micros) / 1000), sentAt, localNow()),
      )
      .catch(() => undefined) // the next call tries again; meanwhile the scripts read Redis's clock
      .finally(() => {
        syncing = false;
      });
  };
  return {
    /** Gate clock minus this process's clock (0 before the first reading). */
    get offset() {
      return offset ?? 0;
    },
    /** The gate's clock now, or undefined while no good reading is there (a reading is asked for when due). */
    now(): number | undefined {
      const t = localNow();
      if (offset === undefined || t - lastSyncAt >= CLOCK_SYNC_MS) sync();
      return offset === undefined ? undefined : t + offset;
    },
  };
}

/** A gate shared through Redis by every process with the same prefix (see the module comment). */
export function createRedisRateGate(opts: RedisRateGateOptions): Required<RateGate> {
  const { redis, prefix } = opts;
  const share = opts.intermediateShare ?? 0.6;
  const burst = Math.max(1, Math.floor(opts.globalBurst ?? 2));
  const marginMs = opts.globalMarginMs ?? 250;
  const windowMs = 1000 + marginMs;
  const floodChats = opts.globalFloodChats ?? 3;
  const floodWindowMs = opts.globalFloodWindowMs ?? 1000;
  const timeoutMs = opts.commandTimeoutMs ?? 2000;
  const local = createLocalRateGate({
    minIntervalMs: (key) => opts.intervalFor(key),
    ...(opts.now ? { now: opts.now } : {}),
  });

  const keys = rateKeys(prefix);
  const chatHash = keys.chat;
  const globalHash = keys.global;

  const timingFor = bucketTimings(windowMs, burst, share);

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

  const call = boundedCall(timeoutMs);

  const localNow = opts.now ?? opts.processClock ?? Date.now;
  const { quiet, quietUntil, quietWait } = quietBook(localNow);

  const fallback = async (chatKey: string, kind: RequestKind, startedAt: number, signal?: AbortSignal) => {
    await local.acquire(chatKey, kind, signal);
    opts.onGrant?.({ chatKey, kind, at: opts.now?.() ?? Date.now(), waitedMs: Date.now() - startedAt, shared: false });
  };

  const holder = randomUUID();
  const gateClock = gateClockOf(redis, localNow);
  /** `now` for a script: the given clock, or the gate's clock from its last TIME reading ('' : the script reads TIME). */
  const clock = (): string => {
    if (opts.now) return String(Math.round(opts.now()));
    const t = gateClock.now();
    return t === undefined ? "" : String(Math.round(t));
  };
  /** Chats whose last request was granted by ACQUIRE: its completion is told to Redis. */
  const settleInRedis = new Map<string, number>();

  const timingOf = (chatKey: string): { budget: GlobalBudget | undefined; timing: BucketTiming } => {
    const budget = opts.globalFor?.(chatKey);
    return { budget, timing: budget ? timingFor(budget) : { T: 0, tau: 0, Ti: 0, taui: 0 } };
  };
  const intervalOf = (chatKey: string) => Math.max(0, Math.ceil(opts.intervalFor(chatKey)));
  /** The gate's clock now, as this process reads it (a grant's time is compared with it). */
  const grantAt = () => localNow() + gateClock.offset;
  /** How late a slot granted for a given time may still be used (the window's latency margin covers it). */
  const slackOf = (interval: number) => (interval > 0 ? Math.min(Math.floor(interval / 2), marginMs) : marginMs);
  /** Where this process's own last request leaves the chat (gate clock), for Redis, which is not told of a prompt completion. */
  const ownNextOf = (chatKey: string): number | "" => {
    const at = quiet.get(chatKey) ?? 0;
    return at > 0 ? Math.round(at + gateClock.offset) : "";
  };

  /** A final granted for later whose wait was aborted gives its chat back (when nothing was granted after it). */
  const ungrant = (chatKey: string, setNext: number, before: number): true => {
    if (usable()) call(() => ungrantScript.run(redis, [chatHash(chatKey)], [setNext, before])).then(markUp, markDown);
    return true;
  };

  /** One slot through Redis (finals, and intermediates of lanes not paced in the process): see the module comment. */
  const slot = async (chatKey: string, kind: RequestKind, startedAt: number, signal?: AbortSignal): Promise<void> => {
    const { budget, timing } = timingOf(chatKey);
    const keys = [chatHash(chatKey), ...(budget ? [globalHash(budget.key)] : [])];
    const interval = intervalOf(chatKey);
    // Woken later than this after a grant's time (a stall), it asks again rather than go out bunched.
    const lateMs = slackOf(interval);
    let ticket: number | undefined;
    /** A final holding its chat from this time (the chat's 'next' before the hold), coming back for the budget. */
    let hold: { at: number; before: number } | undefined;
    if (kind === "intermediate") {
      const ms = quietWait(chatKey);
      if (ms > 0) await abortableSleep(ms + QUIET_MARGIN_MS, signal);
    }
    for (;;) {
      if (!usable()) return await fallback(chatKey, kind, startedAt, signal);
      let reply: [number, number, number, number?, number?];
      try {
        const args = [
          clock(),
          kind,
          interval,
          hold?.at ?? "",
          ticket ?? "",
          timing.T,
          timing.tau,
          timing.Ti,
          timing.taui,
          "",
          "",
          ownNextOf(chatKey),
        ];
        reply = (await call(() => acquireScript.run(redis, keys, args), signal)) as typeof reply;
      } catch (error) {
        if (signal?.aborted) throw signal.reason;
        markDown(error);
        return await fallback(chatKey, kind, startedAt, signal);
      }
      markUp();
      if (reply[0] === 1) {
        const at = reply[1];
        const waitMs = at - grantAt();
        if (waitMs > 0) {
          try {
            await abortableSleep(waitMs, signal);
          } catch (error) {
            ungrant(chatKey, at + interval, reply[2]);
            throw error;
          }
          if (grantAt() - at > lateMs && ungrant(chatKey, at + interval, reply[2])) continue;
        }
        settleInRedis.set(chatKey, localNow());
        opts.onGrant?.({ chatKey, kind, at, waitedMs: Date.now() - startedAt, shared: true });
        return;
      }
      ticket = reply[2] >= 0 ? reply[2] : undefined;
      if (reply[2] === -2) hold = { at: reply[3] as number, before: hold?.before ?? (reply[4] as number) };
      try {
        await abortableSleep(Math.max(1, reply[1]), signal);
      } catch (error) {
        if (hold) ungrant(chatKey, hold.at + interval, hold.before);
        throw error;
      }
    }
  };

  /** Frees the chat in Redis one interval after now. */
  const releaseChat = (chatKey: string) => {
    if (!usable()) return;
    call(() => releaseScript.run(redis, [chatHash(chatKey)], [clock(), intervalOf(chatKey)])).then(markUp, markDown);
  };

  /** The lanes paced in this process, one per bot-wide budget (see the module comment). */
  const lanes = new Map<string, ShareLane>();
  const laneOf = (chatKey: string): ShareLane | undefined => {
    if (!opts.processShareFor?.(chatKey)) return undefined;
    const budget = opts.globalFor?.(chatKey);
    if (!budget) return undefined;
    const lane = lanes.get(budget.key);
    if (lane) return lane;
    const made: ShareLane = createShareLane({
      share: () =>
        createBudgetShare({
          redis,
          key: keys.shares(budget.key),
          holder,
          capacity: budget.perSecond,
          windowMs,
          // Two chats at the lane's pace may start here without a round trip.
          minHeadroom: 2 * Math.ceil(windowMs / Math.max(1, intervalOf(chatKey))),
          clock,
          localNow,
          call: (run) => call(run),
          onChange: () => made.onShareChange(),
          onError: markDown,
          onAnswer: markUp,
        }),
      intervalFor: intervalOf,
      windowMs,
      localNow,
      shared: () => !down && usable(),
      floodChats,
      floodWindowMs,
    });
    lanes.set(budget.key, made);
    return made;
  };

  return {
    async acquire(chatKey, kind, signal) {
      if (signal?.aborted) throw signal.reason;
      const startedAt = Date.now();
      const lane = laneOf(chatKey);
      if (!lane) return await slot(chatKey, kind, startedAt, signal);
      await lane.acquire(chatKey, signal);
      opts.onGrant?.({ chatKey, kind, at: grantAt(), waitedMs: Date.now() - startedAt, shared: !down });
    },

    settled(chatKey) {
      local.settled(chatKey);
      const lane = laneOf(chatKey);
      if (lane) return lane.settled(chatKey);
      quietUntil(chatKey, localNow() + intervalOf(chatKey));
      // A slot's request that completed within a tenth of the interval of its grant reached the platform about
      // when granted: other processes space from the grant, and the interval's margin over the platform's limit
      // covers the rest; this process's next request carries the completion to Redis. A slower one frees the
      // chat now.
      const grantedAt = settleInRedis.get(chatKey);
      if (grantedAt === undefined) return;
      settleInRedis.delete(chatKey);
      if (localNow() - grantedAt <= intervalOf(chatKey) / 10) return;
      releaseChat(chatKey);
    },

    release(chatKey) {
      laneOf(chatKey)?.release(chatKey);
    },

    backoff(chatKey, retryAfterMs) {
      // The local gate learns it too, so pacing stays right if Redis goes away next.
      local.backoff(chatKey, retryAfterMs);
      const lane = laneOf(chatKey);
      // A lane paced in the process: its chat is streamed from here, and its flood is told to every process
      // that gets one (the others' requests are their own).
      if (lane) return lane.backoff(chatKey, retryAfterMs);
      quietUntil(chatKey, localNow() + Math.max(0, retryAfterMs));
      if (!usable()) return;
      const budget = opts.globalFor?.(chatKey);
      const keys = [chatHash(chatKey), ...(budget ? [globalHash(budget.key), `${globalHash(budget.key)}:429`] : [])];
      call(() =>
        backoffScript.run(redis, keys, [
          clock(),
          Math.max(0, Math.ceil(retryAfterMs)),
          chatKey,
          floodWindowMs,
          floodChats,
        ]),
      ).then(markUp, markDown);
    },
  };
}
