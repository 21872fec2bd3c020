/**
 * This worker process's share of a bot-wide budget that every process paces by itself: a lane whose every
 * request is an intermediate (Telegram drafts: no final draws on their budget), so nothing needs to queue
 * across processes. The processes agree on who may use how much through Redis (the SHARE script), a few
 * times a second while this one streams there, never per request: the requests themselves are paced in
 * the process (share-lane.ts).
 *
 * Units are grants in any window of `windowMs` (the gate's 1 s plus its latency margin). While everyone's
 * demand fits, this process may use what it wants plus some headroom, so a chat starting here needs no round
 * trip; when it does not fit, the capacity is split in proportion to demand. Allowances never sum above the
 * capacity: a process grows only into what the others do not hold, and after shrinking it keeps publishing
 * its larger allowance for one window, because its grants of that window still count.
 */
import type { Redis } from "ioredis";
import { redisScript } from "../redis/script.js";
import { SHARE } from "./redis-rate-gate-lua.js";

const shareScript = redisScript(SHARE);

/** How often a process re-agrees its share while the budget is tight (others may be waiting for it to shrink). */
const TIGHT_SYNC_MS = 500;
/** How often it renews its share while there is room for everyone. */
const ROOMY_SYNC_MS = 2000;
/** A share not renewed for this long is dropped by the others (its process is gone). */
const SHARE_TTL_MS = 6000;

/** Options of one process's share. */
export interface BudgetShareOptions {
  redis: Redis;
  /** The budget's hash of shares (`rateKeys(prefix).shares(budget)`). */
  key: string;
  /** This process's id in the hash. */
  holder: string;
  /** Grants the whole deployment may make in any window. */
  capacity: number;
  windowMs: number;
  /** Headroom asked for beyond the demand while there is room: at least this much (a couple of chats' worth). */
  minHeadroom: number;
  /** `now` for the script: the gate's clock, or '' to have the script read Redis's. */
  clock(): string;
  /** This process's clock. */
  localNow(): number;
  /** A Redis call bounded in time. */
  call<T>(run: () => Promise<T>): Promise<T>;
  /** The allowance changed (or the share became usable or unusable). */
  onChange(): void;
  /** A sync failed (the gate paces in the process only until one succeeds). */
  onError(error: unknown): void;
  /** A sync was answered. */
  onAnswer(): void;
}

/** This process's share of one budget. */
export interface BudgetShare {
  /** Grants this process may make in any window now; undefined until a sync is answered, and after one failed. */
  readonly allowance: number | undefined;
  /** What this process wants now, in grants per window; asks Redis at once when that is more than it has. */
  want(demand: number): void;
}

/** Creates the share; it syncs only while this process wants or holds something. */
export function createBudgetShare(opts: BudgetShareOptions): BudgetShare {
  let allowance: number | undefined;
  let demand = 0;
  /** A larger allowance given up within the last window: its grants still count there. */
  let dropped = { value: 0, until: -Infinity };
  /** What the others left free at the last answer. */
  let available = 0;
  let tight = false;
  let lastSyncAt = -Infinity;
  let inFlight = false;
  let again = false;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const floor = () => Math.max(allowance ?? 0, opts.localNow() < dropped.until ? dropped.value : 0);
  const headroom = () => Math.max(opts.minHeadroom, Math.ceil(demand / 4));

  const schedule = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    if (demand === 0 && floor() === 0) return; // nothing wanted, nothing held: the entry lapses in Redis
    timer = setTimeout(sync, tight ? TIGHT_SYNC_MS : ROOMY_SYNC_MS);
    timer.unref?.();
  };

  const learn = (reply: number[]) => {
    const next = Math.max(0, Number(reply[0]));
    const before = allowance ?? 0;
    if (next < before) dropped = { value: Math.max(before, dropped.value), until: opts.localNow() + opts.windowMs };
    available = Number(reply[1]);
    tight = Number(reply[2]) > opts.capacity || next < demand;
    const changed = next !== allowance;
    allowance = next;
    opts.onAnswer();
    if (changed) opts.onChange();
  };

  function sync(): void {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    if (inFlight) {
      again = true;
      return;
    }
    inFlight = true;
    lastSyncAt = opts.localNow();
    const args = [opts.clock(), opts.holder, demand, floor(), opts.capacity, SHARE_TTL_MS, headroom(), opts.windowMs];
    opts
      .call(() => shareScript.run(opts.redis, [opts.key], args))
      .then(
        (reply) => learn(reply as number[]),
        (error: unknown) => {
          const wasUsable = allowance !== undefined;
          allowance = undefined;
          opts.onError(error);
          if (wasUsable) opts.onChange();
        },
      )
      .finally(() => {
        inFlight = false;
        if (again) {
          again = false;
          sync();
        } else schedule();
      });
  }

  return {
    get allowance() {
      return allowance;
    },
    want(next) {
      if (next === demand) return;
      const rising = next > demand;
      demand = next;
      // More than it has, and something to gain by asking now: the first time, room the others left, or a
      // sync due anyway. (Under a tight budget the others free room only at their own syncs.)
      const needMore = rising && next > (allowance ?? 0);
      const worthAsking =
        allowance === undefined || available > allowance || opts.localNow() - lastSyncAt >= TIGHT_SYNC_MS;
      // Letting go at once too: the others may use it once this window passes.
      if ((needMore && worthAsking) || next === 0) sync();
      else if (timer === undefined) schedule();
    },
  };
}
