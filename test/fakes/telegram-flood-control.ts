/**
 * The fake Bot API's flood control, using the figures Telegram documents in its bot FAQ
 * ("avoid sending more than one message per second" in a chat, "no more than 20 messages
 * per minute to the same group", "about 30 messages per second" overall). The real server
 * is fuzzier (short bursts pass); this one is strict on purpose, so pacing that only works
 * thanks to Telegram's tolerance fails in tests. A refused request starts a flood wait like
 * the real one: every request to that chat inside `retry_after` is refused too.
 */

/** How the fake treats its limits: refuse with 429 (default), only record, or ignore. */
export type FloodMode = "enforce" | "record" | "off";

/** Limits applied to sendMessage/editMessageText. */
export interface FloodLimits {
  mode: FloodMode;
  /** Minimum spacing between two counted requests in one chat (private chats and groups). */
  perChatIntervalMs: number;
  /** Counted requests per rolling minute in one group or supergroup. */
  perGroupPerMinute: number;
  /** Counted requests per rolling second over all chats. */
  globalPerSecond: number;
}

/** The documented figures. */
export const DOCUMENTED_FLOOD_LIMITS: FloodLimits = {
  mode: "enforce",
  perChatIntervalMs: 1000,
  perGroupPerMinute: 20,
  globalPerSecond: 30,
};

/** Which limit a request broke. `flood-wait` = it came while an earlier 429's retry_after was still running. */
export type FloodRule = "per-chat" | "per-group" | "global" | "flood-wait";

/** One request the real server would have refused. */
export interface FloodViolation {
  at: number;
  method: string;
  chatId: number;
  rule: FloodRule;
  /** Seconds the client was told to wait. */
  retryAfter: number;
  /** false in "record" mode: the request went through anyway. */
  enforced: boolean;
}

/** Verdict for one counted request. */
export type FloodVerdict = { ok: true } | { ok: false; retryAfter: number; rule: FloodRule };

/** Per-chat and global sliding windows of counted requests. */
export class FloodControl {
  private readonly lastAt = new Map<number, number>();
  private readonly groupWindow = new Map<number, number[]>();
  private globalWindow: number[] = [];
  private readonly floodUntil = new Map<number, number>();
  private globalFloodUntil = 0;
  readonly violations: FloodViolation[] = [];

  constructor(readonly limits: FloodLimits) {}

  /** Decides a counted request at time `at`; an accepted one is counted, a refused one records a violation. */
  admit(method: string, chatId: number, isGroup: boolean, at: number): FloodVerdict {
    if (this.limits.mode === "off") return { ok: true };
    const verdict = this.judge(chatId, isGroup, at);
    if (!verdict.ok) {
      const enforced = this.limits.mode === "enforce";
      this.violations.push({ at, method, chatId, rule: verdict.rule, retryAfter: verdict.retryAfter, enforced });
      if (enforced) {
        // A request inside a running flood wait is refused with the time left; it does not extend the wait.
        if (verdict.rule === "flood-wait") return verdict;
        if (verdict.rule === "global") this.globalFloodUntil = at + verdict.retryAfter * 1000;
        else this.floodUntil.set(chatId, Math.max(this.floodUntil.get(chatId) ?? 0, at + verdict.retryAfter * 1000));
        return verdict;
      }
    }
    this.count(chatId, isGroup, at);
    return { ok: true };
  }

  private judge(chatId: number, isGroup: boolean, at: number): FloodVerdict {
    const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));
    const chatWait = (this.floodUntil.get(chatId) ?? 0) - at;
    if (chatWait > 0) return { ok: false, rule: "flood-wait", retryAfter: seconds(chatWait) };
    if (this.globalFloodUntil - at > 0)
      return { ok: false, rule: "flood-wait", retryAfter: seconds(this.globalFloodUntil - at) };
    const last = this.lastAt.get(chatId);
    if (last !== undefined && at - last < this.limits.perChatIntervalMs) {
      return { ok: false, rule: "per-chat", retryAfter: seconds(last + this.limits.perChatIntervalMs - at) };
    }
    if (isGroup) {
      const window = (this.groupWindow.get(chatId) ?? []).filter((t) => t > at - 60_000);
      this.groupWindow.set(chatId, window);
      if (window.length >= this.limits.perGroupPerMinute) {
        return { ok: false, rule: "per-group", retryAfter: seconds((window[0] as number) + 60_000 - at) };
      }
    }
    this.globalWindow = this.globalWindow.filter((t) => t > at - 1000);
    if (this.globalWindow.length >= this.limits.globalPerSecond) {
      return { ok: false, rule: "global", retryAfter: seconds((this.globalWindow[0] as number) + 1000 - at) };
    }
    return { ok: true };
  }

  private count(chatId: number, isGroup: boolean, at: number): void {
    this.lastAt.set(chatId, at);
    if (isGroup) this.groupWindow.set(chatId, [...(this.groupWindow.get(chatId) ?? []), at]);
    this.globalWindow.push(at);
  }
}
