/**
 * The request credits a process holds per chat (granted by the shared gate's LEASE script): k slots at
 * `start + j * interval`, each usable from its time until `slack` later, never closer to the previous
 * request of this process in that chat than the interval. Handing one out is local: no Redis round
 * trip per request. Times are this process's clock.
 */

/** One chat's credits. */
interface ChatCredits {
  start: number;
  count: number;
  interval: number;
  slack: number;
  /** First credit not used or skipped yet. */
  next: number;
}

/** What `take` found: a credit now, a wait for the next one, or none left (ask for more). */
export type CreditAnswer = { kind: "now" } | { kind: "wait"; ms: number } | { kind: "none" };

/** Chats remembered before expired entries are swept (bounded memory in a long-lived worker). */
const MAX_CHATS = 1024;

/** The credits of every chat this process streams into, and when its last request in each started. */
export interface CreditBook {
  /** Replaces the chat's credits with a fresh grant. */
  grant(chatKey: string, credits: { start: number; count: number; interval: number; slack: number }): void;
  /** Uses the next credit that is due (marking the request's start), or says how long to wait, or that none is left. */
  take(chatKey: string, now: number): CreditAnswer;
  /** Credits still to come after `now` (given back when the chat is released). */
  unused(chatKey: string, now: number): number;
  /** True while the chat's credits have not all passed. */
  holds(chatKey: string, now: number): boolean;
  /** Forgets the chat's credits (a final used the chat, a 429 voided them, or they were released). */
  drop(chatKey: string): void;
  /** When this process's last request into the chat started, if it remembers. */
  lastStart(chatKey: string): number | undefined;
}

/** Creates an empty book. */
export function createCreditBook(): CreditBook {
  const chats = new Map<string, ChatCredits>();
  const starts = new Map<string, number>();
  const endOf = (c: ChatCredits) => c.start + (c.count - 1) * c.interval + c.slack;

  const sweep = (now: number) => {
    if (chats.size >= MAX_CHATS) for (const [key, c] of chats) if (endOf(c) < now) chats.delete(key);
    if (starts.size >= MAX_CHATS) {
      for (const [key, at] of starts) if (!chats.has(key) && at < now - 60_000) starts.delete(key);
    }
  };

  return {
    grant(chatKey, credits) {
      sweep(credits.start);
      chats.set(chatKey, { ...credits, next: 0 });
    },
    take(chatKey, now) {
      const c = chats.get(chatKey);
      if (!c) return { kind: "none" };
      const last = starts.get(chatKey);
      const earliest = Math.max(now, last === undefined ? -Infinity : last + c.interval);
      while (c.next < c.count) {
        const at = c.start + c.next * c.interval;
        if (earliest <= at + c.slack) {
          const due = Math.max(at, earliest);
          if (due > now) return { kind: "wait", ms: Math.ceil(due - now) };
          c.next += 1;
          starts.set(chatKey, now);
          return { kind: "now" };
        }
        c.next += 1; // missed: its time went by unused
      }
      chats.delete(chatKey);
      return { kind: "none" };
    },
    unused(chatKey, now) {
      const c = chats.get(chatKey);
      if (!c) return 0;
      let n = 0;
      for (let j = c.next; j < c.count; j++) if (c.start + j * c.interval > now) n++;
      return n;
    },
    holds(chatKey, now) {
      const c = chats.get(chatKey);
      return c !== undefined && endOf(c) >= now;
    },
    drop(chatKey) {
      chats.delete(chatKey);
    },
    lastStart: (chatKey) => starts.get(chatKey),
  };
}
