/**
 * Pacing shared by every process of a deployment, in two small parts:
 *
 * - In the process: the chat's requests one interval apart, spaced from the previous request's
 *   completion, finals ahead of waiting intermediates, a 429 blocking the chat (`createLocalRateGate`).
 *   Lanes only one process ever writes (Telegram drafts: a private chat is one conversation, whose jobs
 *   run one at a time) stop here, with no Redis round trip per request.
 * - In Redis, one script per granted request (`pace-slot.lua`): the chat's cell, so other processes answering
 *   in the same chat (a group's forum topics, the bots role's courtesy replies) keep the pace too, and
 *   the platform's bot-wide budget as GCRA with a reserve: intermediates may only use the budget while
 *   `reserve` slots are left, so a final never waits behind intermediates. Time is Redis `TIME`.
 *   A process's requests for one budget wait in a line (finals first) whose head alone asks the script.
 *
 * A 429 (`backoff`) blocks the chat for every process until `retry_after`, and the whole platform when
 * the platform said the limit was global. When Redis does not answer, the process's own pacing is all
 * there is (fail open: replies keep their local pacing rather than freezing), logged once.
 *
 * Keys (P = prefix, K = pacing key, G = budget key): `P:pace:c:K` and `P:pace:g:G`, hashes with one field,
 * `tat`, each expiring when it no longer holds anything back.
 */
import { readFileSync } from "node:fs";
import type { Redis } from "ioredis";
import type { GlobalBudget } from "../contracts/platform-pacing.js";
import { paceKeys } from "../redis/keys.js";
import { createLocalRateGate, type RateGate } from "./rate-gate.js";
import { within } from "../shared/deadline.js";

const SLOT_LUA = readFileSync(new URL("./pace-slot.lua", import.meta.url), "utf8");
const BLOCK_LUA = readFileSync(new URL("./pace-block.lua", import.meta.url), "utf8");

/** The scripts as ioredis commands (EVALSHA, EVAL on NOSCRIPT), defined once per connection. */
interface PacingCommands {
  paceSlot(
    chat: string,
    budget: string,
    intervalMs: number,
    emissionMs: number,
    toleranceMs: number,
  ): Promise<[number, number, number, number?]>;
  paceBlock(keyCount: number, ...keysThenMs: (string | number)[]): Promise<number>;
}

function pacingCommands(redis: Redis): PacingCommands {
  const commands = redis as unknown as Partial<PacingCommands>;
  if (!commands.paceSlot) redis.defineCommand("paceSlot", { numberOfKeys: 2, lua: SLOT_LUA });
  if (!commands.paceBlock) redis.defineCommand("paceBlock", { lua: BLOCK_LUA });
  return redis as unknown as PacingCommands;
}

/**
 * A line of requests, finals first; `notBefore`: its chat holds a request back until then; `wake` ends a pause;
 * `budgetHeld`: the pause is the budget's, which the head (a final or an intermediate) has to wait out;
 * `budgetAt`: when (local time) the budget's schedule reaches now, as of the line's last grant.
 */
type Asker = { chatKey: string; final: boolean; notBefore: number; granted(): void };
type Line = { waiting: Asker[]; wake?: () => void; budgetHeld?: "final" | "intermediate"; budgetAt: number };

/** Options of the shared gate. */
export interface RedisPacingOptions {
  redis: Redis;
  /** KEY_PREFIX of the deployment: every process with the same prefix shares the budgets. */
  prefix: string;
  /** Minimum time between two requests into one chat (per pacing key). */
  intervalFor(chatKey: string): number;
  /** The bot-wide budget a pacing key draws on, or undefined for none. */
  globalFor?(chatKey: string): GlobalBudget | undefined;
  /** Pacing keys only this process writes to (drafts): paced here alone, no round trip per request. */
  localOnly?(chatKey: string): boolean;
  /** Budget slots kept for finals (default 2). */
  reserve?: number;
  /** Slack on the 1 s window for latency and a busy process sending a grant late (default 250 ms; only a line's head asks, so a stalled process holds one). */
  marginMs?: number;
  /** Told of every slot the script granted, at Redis's time (for metrics and tests). */
  onGrant?(grant: { chatKey: string; final: boolean; at: number }): void;
  /**
   * A Redis call slower than this counts as Redis away (default 10 s: a busy process sees answers late, and
   * pacing without the shared budget then would break it; a lost connection is seen at once from its status).
   */
  commandTimeoutMs?: number;
  logger?: { warn(obj: object, msg?: string): void; info(obj: object, msg?: string): void };
}

/**
 * GCRA timing of a budget: at most `perSecond` slots in any window of `windowMs`, i.e.
 * floor(W / T) + burst ≤ perSecond; finals may run `burst - 1` slots ahead, intermediates `reserve` fewer.
 */
export function budgetTiming(perSecond: number, windowMs: number, reserve: number) {
  const burst = reserve + 1;
  const T = windowMs / Math.max(1, perSecond - burst);
  return { T, finalToleranceMs: (burst - 1) * T, intermediateToleranceMs: (burst - 1 - reserve) * T };
}

/** The gate of every worker and bots process (see the module comment). */
export function createRedisPacing(opts: RedisPacingOptions): Required<RateGate> {
  const { redis, reserve = 2, marginMs = 250 } = opts;
  const keys = paceKeys(opts.prefix);
  const commands = pacingCommands(redis);
  const windowMs = 1000 + marginMs;
  const local = createLocalRateGate({ minIntervalMs: (key) => opts.intervalFor(key) });
  const shared = (chatKey: string) => !opts.localOnly?.(chatKey);
  const timeoutMs = opts.commandTimeoutMs ?? 10_000;

  let down = false;
  const usable = () => redis.status === "ready" || (!down && ["wait", "connecting", "connect"].includes(redis.status));
  const markDown = (error: unknown) => {
    if (down) return;
    down = true;
    opts.logger?.warn({ err: error }, "shared pacing unavailable: pacing replies in this process only");
  };
  const markUp = () => {
    if (!down) return;
    down = false;
    opts.logger?.info({}, "shared pacing available again");
  };

  /** The chat's budget, its emission interval, and how far ahead of now its schedule may run for the request. */
  const timingOf = (chatKey: string, final: boolean) => {
    const budget = opts.globalFor?.(chatKey);
    const t = budget && budgetTiming(budget.perSecond, windowMs, reserve);
    const tolerance = (final ? t?.finalToleranceMs : t?.intermediateToleranceMs) ?? 0;
    return { key: budget?.key ?? "none", T: t?.T ?? 0, tolerance };
  };

  /**
   * One script call: 0 when the slot is granted (or Redis failed: fail open), with the local time by which the
   * budget's schedule reaches now (a lower bound: counted from when the call was sent); else the wait and its cause.
   */
  const ask = async (chatKey: string, final: boolean) => {
    const open = { wait: 0, chatHeld: false, budgetAt: 0 };
    if (!usable()) {
      markDown(new Error(`Redis connection is ${redis.status}`));
      return open;
    }
    const sentAt = Date.now();
    const { key, T, tolerance } = timingOf(chatKey, final);
    try {
      const slot = commands.paceSlot(keys.chat(chatKey), keys.budget(key), opts.intervalFor(chatKey), T, tolerance);
      const [ms, at, cause, ahead] = await within(timeoutMs, slot, `Redis did not answer within ${timeoutMs} ms`);
      markUp();
      const wait = Math.max(0, Number(ms) || 0);
      if (wait === 0) opts.onGrant?.({ chatKey, final, at: Number(at) });
      return { wait, chatHeld: Number(cause) === 1, budgetAt: sentAt + Math.max(0, Number(ahead) || 0) };
    } catch (error) {
      markDown(error);
      return open;
    }
  };

  /**
   * The process's requests waiting for one bot-wide budget (or one unbudgeted chat) form a line, finals
   * first, and only the first whose chat is free asks Redis: a crowded budget costs about one script call
   * per slot, not one per waiting request and retry. A request whose chat holds it back steps aside.
   */
  const lines = new Map<string, Line>();
  /** Slots granted to a request cut short meanwhile: the chat's next request (its final) takes one within half the margin. */
  const spares = new Map<string, number>();

  const pause = (line: Line, ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => line.wake?.(), Math.max(0, ms));
      line.wake = () => {
        clearTimeout(timer);
        line.wake = undefined;
        resolve();
      };
    });

  const runLine = async (lineKey: string, line: Line) => {
    while (line.waiting.length > 0) {
      const now = Date.now();
      const next = line.waiting.find((w) => w.notBefore <= now);
      const heldUntil = Math.min(...line.waiting.filter((w) => w.notBefore > now).map((w) => w.notBefore));
      if (!next) {
        await pause(line, heldUntil - now);
        continue;
      }
      // The line's last grant said how far ahead the budget runs: no slot for `next` before then (other
      // processes only push the schedule further), so asking earlier would be a refused call.
      const early = line.budgetAt - timingOf(next.chatKey, next.final).tolerance - now;
      const { wait, chatHeld, budgetAt } =
        early > 0 ? { wait: early, chatHeld: false, budgetAt: line.budgetAt } : await ask(next.chatKey, next.final);
      if (!line.waiting.includes(next)) {
        if (wait === 0 && spares.size < 1024) spares.set(next.chatKey, Date.now()); // aborted while granted
        continue;
      }
      if (wait === 0) {
        line.waiting.splice(line.waiting.indexOf(next), 1);
        line.budgetAt = budgetAt;
        next.granted();
      } else if (chatHeld) next.notBefore = Date.now() + wait;
      else {
        line.budgetHeld = next.final ? "final" : "intermediate";
        await pause(line, Math.min(wait, heldUntil - Date.now()));
        line.budgetHeld = undefined;
      }
    }
    lines.delete(lineKey);
  };

  /** Waits in the line of the chat's budget (or of the chat, with none) until the script grants a slot. */
  const takeShared = (chatKey: string, final: boolean, signal?: AbortSignal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const spared = spares.get(chatKey) ?? Number.NEGATIVE_INFINITY;
      if (spares.delete(chatKey) && Date.now() - spared < marginMs / 2) return resolve();
      const lineKey = opts.globalFor?.(chatKey)?.key ?? `chat:${chatKey}`;
      const line = lines.get(lineKey) ?? { waiting: [], budgetAt: 0 };
      const onAbort = () => {
        if (line.waiting.includes(asker)) line.waiting.splice(line.waiting.indexOf(asker), 1);
        reject(signal?.reason);
      };
      const granted = () => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      };
      const asker: Asker = { chatKey, final, notBefore: 0, granted };
      signal?.addEventListener("abort", onAbort, { once: true });
      const at = final ? line.waiting.findIndex((w) => !w.final) : -1;
      line.waiting.splice(at >= 0 ? at : line.waiting.length, 0, asker);
      // While the budget holds the line, a newcomer would be refused too, unless it is a final behind an intermediate
      // (finals may run further ahead): waking the line for it would only cost a script call.
      if (line.budgetHeld === undefined || (final && line.budgetHeld === "intermediate")) line.wake?.();
      if (lines.has(lineKey)) return;
      lines.set(lineKey, line);
      void runLine(lineKey, line);
    });

  return {
    async acquire(chatKey, kind, signal) {
      await local.acquire(chatKey, kind, signal);
      if (!shared(chatKey)) return;
      try {
        await takeShared(chatKey, kind === "final", signal);
      } catch (error) {
        // Nothing was sent (e.g. an intermediate waiting for the budget when the final came): no pace to keep from it.
        local.unused(chatKey);
        throw error;
      }
    },
    settled: (chatKey) => local.settled(chatKey),
    backoff(chatKey, retryAfterMs, global) {
      local.backoff(chatKey, retryAfterMs);
      if (!shared(chatKey) || !usable()) return;
      const budget = global ? opts.globalFor?.(chatKey) : undefined;
      const blocked = [keys.chat(chatKey), ...(budget ? [keys.budget(budget.key)] : [])];
      commands.paceBlock(blocked.length, ...blocked, Math.ceil(retryAfterMs)).then(markUp, markDown);
    },
  };
}
