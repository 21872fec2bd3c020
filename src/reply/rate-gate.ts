/**
 * The pacing seam: before every send/edit/draft the editor asks the gate for a
 * slot in its chat. The in-memory gate here spaces slots per chat inside one
 * process; a Redis-backed gate shared by all worker processes
 * implements the same interface, so it stays small.
 */

/** A request that can wait (streaming progress) or one that must land (the last text of a message). */
export type RequestKind = "intermediate" | "final";

/** Grants request slots per chat; `final` slots are granted before waiting `intermediate` ones. */
export interface RateGate {
  /** Resolves when a request to `chatKey` may start now; rejects with the signal's reason on abort. */
  acquire(chatKey: string, kind: RequestKind, signal?: AbortSignal): Promise<void>;
  /** The platform answered 429: no slot in this chat (`global`: on its whole platform) before `retryAfterMs` from now. */
  backoff?(chatKey: string, retryAfterMs: number, global?: boolean): void;
  /**
   * The request granted for this chat has finished: the next one is spaced from now, not only from the
   * grant (a request delayed on its way — event-loop lag, a slow network — must not arrive at the
   * platform closer to the next one than the interval).
   */
  settled?(chatKey: string): void;
}

/** Pacing of the in-process gate. */
export interface LocalRateGateOptions {
  /** Minimum time between two granted slots in one chat (a number, or per chat). */
  minIntervalMs: number | ((chatKey: string) => number);
  now?: () => number;
}

interface Waiter {
  kind: RequestKind;
  resolve(): void;
  reject(reason: unknown): void;
  cleanup(): void;
}

interface ChatState {
  lastGrantAt?: number;
  /** The grant before the last one: the pace counts from it again when the last slot went unused. */
  previousGrantAt?: number;
  blockedUntil: number;
  waiters: Waiter[];
  timer?: ReturnType<typeof setTimeout>;
}

/** Idle chats kept before old ones are forgotten (bounded memory in a long-lived worker). */
const MAX_IDLE_CHATS = 1024;

/** An in-process gate: slots in a chat at least `minIntervalMs` apart, finals first, timers armed only while someone waits. */
export function createLocalRateGate(
  opts: LocalRateGateOptions,
): Required<RateGate> & { unused(chatKey: string): void } {
  const now = opts.now ?? Date.now;
  const intervalOf = typeof opts.minIntervalMs === "function" ? opts.minIntervalMs : () => opts.minIntervalMs as number;
  const chats = new Map<string, ChatState>();

  const readyAt = (key: string, st: ChatState) =>
    Math.max(st.lastGrantAt === undefined ? -Infinity : st.lastGrantAt + intervalOf(key), st.blockedUntil);

  const pump = (key: string) => {
    const st = chats.get(key);
    if (!st || st.timer) return;
    while (st.waiters.length > 0) {
      const t = now();
      const at = readyAt(key, st);
      if (t < at) {
        st.timer = setTimeout(() => {
          st.timer = undefined;
          pump(key);
        }, at - t);
        return;
      }
      const waiter = st.waiters.shift() as Waiter;
      waiter.cleanup();
      st.previousGrantAt = st.lastGrantAt;
      st.lastGrantAt = t;
      waiter.resolve();
    }
  };

  const forgetIdleChats = () => {
    if (chats.size <= MAX_IDLE_CHATS) return;
    const t = now();
    for (const [key, st] of chats) {
      if (st.waiters.length === 0 && !st.timer && readyAt(key, st) <= t) chats.delete(key);
    }
  };

  const stateOf = (key: string): ChatState => {
    let st = chats.get(key);
    if (!st) {
      forgetIdleChats();
      st = { blockedUntil: -Infinity, waiters: [] };
      chats.set(key, st);
    }
    return st;
  };

  return {
    acquire(chatKey, kind, signal) {
      if (signal?.aborted) return Promise.reject(signal.reason);
      const st = stateOf(chatKey);
      return new Promise<void>((resolve, reject) => {
        const onAbort = () => {
          const index = st.waiters.indexOf(waiter);
          if (index >= 0) st.waiters.splice(index, 1);
          reject(signal?.reason);
        };
        const waiter: Waiter = {
          kind,
          resolve,
          reject,
          cleanup: () => signal?.removeEventListener("abort", onAbort),
        };
        signal?.addEventListener("abort", onAbort, { once: true });
        // Finals go ahead of every waiting intermediate (FIFO among finals), so the last text always has room.
        const at = kind === "final" ? st.waiters.findIndex((w) => w.kind === "intermediate") : -1;
        if (at >= 0) st.waiters.splice(at, 0, waiter);
        else st.waiters.push(waiter);
        pump(chatKey);
      });
    },
    settled(chatKey) {
      const st = stateOf(chatKey);
      st.lastGrantAt = Math.max(st.lastGrantAt ?? -Infinity, now());
    },
    // The last slot granted was not used (its wait for a shared slot was cut short): the pace counts from the one before.
    unused(chatKey) {
      const st = stateOf(chatKey);
      st.lastGrantAt = st.previousGrantAt;
      if (st.timer) clearTimeout(st.timer);
      st.timer = undefined;
      pump(chatKey);
    },
    backoff(chatKey, retryAfterMs) {
      const st = stateOf(chatKey);
      st.blockedUntil = Math.max(st.blockedUntil, now() + retryAfterMs);
      clearTimeout(st.timer);
      st.timer = undefined;
      pump(chatKey);
    },
  };
}
