/**
 * A lane paced inside this worker process (Telegram drafts): each chat at its interval, and all of the
 * process's chats together at its share of the bot-wide budget (budget-share.ts), with no Redis round trip
 * per request. Only intermediates use such a lane, and a chat's requests in it come from the one process
 * answering that conversation, so nothing has to queue across processes: the shares keep the deployment
 * inside the budget, and the lane keeps this process inside its share.
 *
 * Requests whose chat is due wait in one queue, first come first served, so every streaming chat gets
 * its turn; the queue is served at the allowance's pace: at most `allowance` grants in any window.
 */
import type { BudgetShare } from "./budget-share.js";
import { abortableSleep } from "../shared/abortable-sleep.js";

/** Options of a lane. */
export interface ShareLaneOptions {
  /** Created with the lane's `onShareChange` as its `onChange`. */
  share(): BudgetShare;
  intervalFor(chatKey: string): number;
  windowMs: number;
  localNow(): number;
  /** False while Redis is away: chats are then paced at their interval only (as the rest of the gate fails open). */
  shared(): boolean;
  /** 429s in this many different chats within `floodWindowMs` block the whole lane (a bot-wide flood). */
  floodChats: number;
  floodWindowMs: number;
}

/** One lane of the gate. */
export interface ShareLane {
  acquire(chatKey: string, signal?: AbortSignal): Promise<void>;
  settled(chatKey: string): void;
  /** The chat's stream ended here: it no longer counts in this process's demand. */
  release(chatKey: string): void;
  backoff(chatKey: string, retryAfterMs: number): void;
  /** The share's allowance changed: serve the queue at the new pace. */
  onShareChange(): void;
}

interface ChatPace {
  /** Earliest next grant: the interval after the last grant and after its completion, or a 429's block. */
  readyAt: number;
  /** Counted in the demand since its first request, until it is released or goes quiet. */
  streaming: boolean;
  seenAt: number;
}

interface Waiting {
  chatKey: string;
  resolve(): void;
  signal?: AbortSignal;
  onAbort?: () => void;
}

/** A chat that asked nothing for this long is no longer counted as streaming (a draft is kept alive every 20 s). */
const QUIET_MS = 30_000;
/** Chats remembered before quiet ones are swept (bounded memory in a long-lived worker). */
const MAX_CHATS = 1024;

/** Creates a lane; `share` is called once, on the first request. */
export function createShareLane(opts: ShareLaneOptions): ShareLane {
  const chats = new Map<string, ChatPace>();
  const queue: Waiting[] = [];
  let share: BudgetShare | undefined;
  let demand = 0;
  /** The theoretical time of the next grant (GCRA). */
  let tat = -Infinity;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let blockedUntil = -Infinity;
  const recent429 = new Map<string, number>();

  /** What a streaming chat wants of the budget: its requests in a window at its interval. */
  const unitsOf = (chatKey: string) => Math.ceil(opts.windowMs / Math.max(1, opts.intervalFor(chatKey)));
  const setStreaming = (chatKey: string, pace: ChatPace, streaming: boolean) => {
    if (pace.streaming === streaming) return;
    pace.streaming = streaming;
    demand += (streaming ? 1 : -1) * unitsOf(chatKey);
    (share ??= opts.share()).want(demand);
  };
  let sweptAt = -Infinity;
  /** Chats quiet for long no longer count as streaming (a reply that never released its chat), and are forgotten when many. */
  const sweep = (t: number) => {
    sweptAt = t;
    for (const [key, p] of chats) {
      if (t - p.seenAt <= QUIET_MS || p.readyAt > t) continue;
      setStreaming(key, p, false);
      if (chats.size >= MAX_CHATS) chats.delete(key);
    }
  };
  const paceOf = (chatKey: string): ChatPace => {
    let pace = chats.get(chatKey);
    if (pace) return pace;
    const t = opts.localNow();
    if (chats.size >= MAX_CHATS || t - sweptAt > QUIET_MS) sweep(t);
    pace = { readyAt: -Infinity, streaming: false, seenAt: t };
    chats.set(chatKey, pace);
    return pace;
  };

  /**
   * The GCRA of an allowance: at most `allowance` grants in any window, floor(W / T) + burst. Two may go back to
   * back (tolerance T), so a timer that fires late is made up with the next grant instead of lost.
   */
  const bucketOf = (allowance: number): { T: number; tau: number } => {
    if (allowance >= 3) {
      const T = opts.windowMs / (allowance - 2);
      return { T, tau: T };
    }
    return { T: allowance === 2 ? opts.windowMs : opts.windowMs + 1, tau: 0 };
  };

  const grant = (waiting: Waiting, t: number) => {
    if (waiting.onAbort) waiting.signal?.removeEventListener("abort", waiting.onAbort);
    const pace = paceOf(waiting.chatKey);
    pace.readyAt = Math.max(pace.readyAt, t + opts.intervalFor(waiting.chatKey));
    waiting.resolve();
  };

  const arm = (ms: number) => {
    timer = setTimeout(() => {
      timer = undefined;
      pump();
    }, ms);
  };

  /**
   * Serves the queue, first come first served among chats that are due (a chat's second request never goes
   * out closer than its interval): at the allowance's pace while shared, at once when not (Redis away).
   */
  const pump = () => {
    if (timer !== undefined) return;
    while (queue.length > 0) {
      const t = opts.localNow();
      const isShared = opts.shared();
      let bucket: { T: number; tau: number } | undefined;
      if (isShared) {
        const allowance = share?.allowance;
        if (allowance === undefined || allowance < 1) return; // the share's next answer pumps again
        bucket = bucketOf(allowance);
      }
      const at = Math.max(bucket ? tat - bucket.tau : -Infinity, blockedUntil);
      if (at > t) return arm(at - t);
      const index = queue.findIndex((w) => paceOf(w.chatKey).readyAt <= t);
      if (index < 0) return arm(Math.min(...queue.map((w) => paceOf(w.chatKey).readyAt)) - t);
      if (bucket) tat = Math.max(tat, t) + bucket.T;
      grant(queue.splice(index, 1)[0] as Waiting, t);
    }
  };

  return {
    async acquire(chatKey, signal) {
      if (signal?.aborted) throw signal.reason;
      const pace = paceOf(chatKey);
      pace.seenAt = opts.localNow();
      setStreaming(chatKey, pace, true);
      const wait = pace.readyAt - opts.localNow();
      if (wait > 0) await abortableSleep(wait, signal);
      await new Promise<void>((resolve, reject) => {
        const waiting: Waiting = { chatKey, resolve, ...(signal ? { signal } : {}) };
        if (signal) {
          waiting.onAbort = () => {
            const index = queue.indexOf(waiting);
            if (index >= 0) queue.splice(index, 1);
            reject(signal.reason);
          };
          signal.addEventListener("abort", waiting.onAbort, { once: true });
        }
        queue.push(waiting);
        pump();
      });
    },
    settled(chatKey) {
      const pace = paceOf(chatKey);
      pace.readyAt = Math.max(pace.readyAt, opts.localNow() + opts.intervalFor(chatKey));
    },
    release(chatKey) {
      const pace = chats.get(chatKey);
      if (pace) setStreaming(chatKey, pace, false);
    },
    backoff(chatKey, retryAfterMs) {
      const t = opts.localNow();
      const until = t + Math.max(0, retryAfterMs);
      const pace = paceOf(chatKey);
      pace.readyAt = Math.max(pace.readyAt, until);
      // Telegram does not say which limit a 429 was for: several chats at once means the bot as a whole.
      recent429.set(chatKey, t);
      for (const [key, at] of recent429) if (at < t - opts.floodWindowMs) recent429.delete(key);
      if (recent429.size >= opts.floodChats) blockedUntil = Math.max(blockedUntil, until);
    },
    onShareChange() {
      if (timer !== undefined) {
        clearTimeout(timer);
        timer = undefined;
      }
      pump();
    },
  };
}
