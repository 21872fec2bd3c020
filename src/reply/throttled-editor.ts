/**
 * One coalescing editor per message. `update` never blocks and never queues:
 * it only replaces the newest wanted text. A single pump sends it when allowed —
 * at most one request in flight, the next one armed only after the previous
 * finished AND the spacing/gate allow it, never a request that would show what
 * is already visible. A 429 waits `retryAfterMs` and then sends the *newest*
 * text. `flush` lands the final text (final requests go ahead at the gate) and
 * resolves only once it is visible.
 *
 * No loop sleeps to poll: the pump runs only while there is something to send,
 * and every wait is a timer or the gate armed by an event.
 *
 * Pull mode (`invalidate` + `produce`): the owner only says "something changed";
 * the editor asks it for the content once it holds a slot, right before the
 * request. The text sent is then the freshest there is, and rendering happens
 * once per request instead of once per change or on a timer.
 */
import { RateLimitedError, RejectedContentError } from "../contracts/reply-port.js";
import type { RateGate, RequestKind } from "./rate-gate.js";
import { abortableSleep } from "../shared/abortable-sleep.js";

/** Spacing between requests, shared by every editor of one reply (so its messages together keep the chat's pace). */
export interface RequestSpacing {
  minIntervalMs: number;
  /** When the last request of this reply started (set by the editors). */
  lastStartAt?: number;
}

/** What one editor needs: where to pace, how to send, and how hard to retry. */
export interface ThrottledEditorOptions<T> {
  chatKey: string;
  gate: RateGate;
  /** Performs one request (send, edit or draft). Throws RateLimitedError, RejectedContentError or a transient error. */
  apply(content: T, opts: { final: boolean; signal?: AbortSignal }): Promise<void>;
  /** Equality of contents (default `===`); equal contents are never sent twice. */
  equals?(a: T, b: T): boolean;
  /** Content already visible before the first request. */
  visible?: T;
  spacing?: RequestSpacing;
  /** Cancels waiting and in-flight *intermediate* requests (the final one is governed by `flush`'s own signal). */
  signal?: AbortSignal;
  /** Retries of a failed final request that is neither 429 nor rejected content (default 4). */
  maxTransientRetries?: number;
  /** Wait before the n-th transient retry (default 500 ms doubling, at most 8 s). */
  transientDelayMs?(attempt: number): number;
  /** 429s honoured for one text before giving up (default 50: a storm is waited out, but not forever). */
  maxRateLimitWaits?: number;
  /**
   * Pull mode: called when an invalidated editor holds a slot, just before its request; the owner renders
   * now and hands the newest content over with `update` (synchronously). Nothing updated = nothing sent.
   */
  produce?(): void;
  /** Called after every successful request (the engine re-arms its draft keep-alive here). */
  onApplied?(content: T, final: boolean): void;
  now?(): number;
}

/** The coalescing editor of one message. */
export interface ThrottledEditor<T> {
  /** Wants `content` visible soon; returns at once. Ignored once `flush` was called. */
  update(content: T): void;
  /** Pull mode: newer content exists; `produce` is asked for it once a slot is held. Returns at once; ignored once `flush` was called. */
  invalidate(): void;
  /** Makes `content` the message's final text; resolves once it is visible, rejects on rejected content or exhausted retries. */
  flush(content: T, opts?: { signal?: AbortSignal }): Promise<void>;
  /** Sends the visible content again although unchanged (keeps an expiring draft alive). */
  refresh(): void;
  /** Drops a pending intermediate text; resolves when no request is in flight any more. */
  cancel(): Promise<void>;
  /** What the platform shows, as far as this editor knows. */
  readonly visible: T | undefined;
}

interface FinalRequest<T> {
  content: T;
  signal?: AbortSignal;
  resolve(): void;
  reject(error: unknown): void;
  promise: Promise<void>;
}

/** Creates the coalescing, throttled editor of one message. */
export function createThrottledEditor<T>(opts: ThrottledEditorOptions<T>): ThrottledEditor<T> {
  const equals = opts.equals ?? ((a: T, b: T) => a === b);
  const now = opts.now ?? Date.now;
  const maxTransient = opts.maxTransientRetries ?? 4;
  const maxRateWaits = opts.maxRateLimitWaits ?? 50;
  const transientDelay = opts.transientDelayMs ?? ((n: number) => Math.min(8000, 500 * 2 ** (n - 1)));

  let visible: T | undefined = opts.visible;
  let visibleFinal = false;
  let pending: T | undefined;
  let force = false;
  /** Invalidated: `produce` must be asked before the next intermediate request. */
  let stale = false;
  let rejected: T | undefined;
  let final: FinalRequest<T> | undefined;
  /** Set by the first flush: from then on only final texts are sent (a late intermediate must never follow the final). */
  let closed = false;
  let running: Promise<void> | undefined;
  /** Ends an intermediate's wait for a slot: a final arriving meanwhile queues as a final (not behind other answers' finals), a cancel stops at once. */
  let upgradeWait: (() => void) | undefined;

  /** What the pump should send next, or undefined when everything wanted is visible. */
  const nextJob = (): { final: boolean } | undefined => {
    if (final) {
      if (visible !== undefined && visibleFinal && equals(final.content, visible)) {
        const done = final;
        final = undefined;
        done.resolve();
        return undefined;
      }
      return { final: true };
    }
    if (closed) return undefined;
    if (pending === undefined) return stale ? { final: false } : undefined;
    if (
      (!force && visible !== undefined && equals(pending, visible)) ||
      (rejected !== undefined && equals(pending, rejected))
    ) {
      pending = undefined;
      force = false;
      return stale ? { final: false } : undefined;
    }
    return { final: false };
  };

  const failFinal = (error: unknown) => {
    const f = final;
    final = undefined;
    f?.reject(error);
  };

  /**
   * What an intermediate's wait listens to: the reply's signal and the upgrade. Kept across waits until
   * an upgrade fires it, so a reply makes one or two of these rather than one per draft (each
   * AbortSignal.any stays tied to the reply's signal until that ends).
   */
  let intermediateWait: { controller: AbortController; signal: AbortSignal } | undefined;
  const upgradeSignal = (): { controller: AbortController; signal: AbortSignal } => {
    if (!intermediateWait || intermediateWait.controller.signal.aborted) {
      const controller = new AbortController();
      intermediateWait = {
        controller,
        signal: opts.signal ? AbortSignal.any([opts.signal, controller.signal]) : controller.signal,
      };
    }
    return intermediateWait;
  };

  /** Waits for the chat's spacing and a gate slot; false when the wait was cut short (look again at what is wanted). */
  const awaitSlot = async (job: { final: boolean }): Promise<boolean> => {
    const kind: RequestKind = job.final ? "final" : "intermediate";
    const upgrade = job.final ? undefined : upgradeSignal();
    const signal = job.final ? final?.signal : upgrade?.signal;
    upgradeWait = upgrade ? () => upgrade.controller.abort() : undefined;
    try {
      const spacing = opts.spacing;
      if (spacing?.lastStartAt !== undefined) {
        await abortableSleep(spacing.lastStartAt + spacing.minIntervalMs - now(), signal);
      }
      await opts.gate.acquire(opts.chatKey, kind, signal);
      return true;
    } catch (error) {
      // flush() or cancel() arrived while an intermediate waited: look again at what is wanted now.
      if (upgrade?.controller.signal.aborted && !opts.signal?.aborted) return false;
      // Aborted while waiting: an intermediate is simply dropped; a final fails its flush.
      if (job.final) failFinal(error);
      else {
        pending = undefined;
        stale = false;
      }
      return false;
    } finally {
      upgradeWait = undefined;
    }
  };

  /** Sends the same content again after `ms` (an intermediate is kept only if nothing newer is pending). */
  const retryAfter = async (ms: number, isFinal: boolean, content: T): Promise<void> => {
    if (!isFinal && pending === undefined) pending = content;
    try {
      await abortableSleep(ms, isFinal ? final?.signal : opts.signal);
    } catch (abortReason) {
      if (isFinal) failFinal(abortReason);
      else pending = undefined;
    }
  };

  /** Failures of one request: 429 → wait it out, refused content → never again, else a few retries with backoff. */
  const onRequestFailed = async (
    error: unknown,
    isFinal: boolean,
    content: T,
    counts: { transient: number; rateWaits: number },
  ): Promise<void> => {
    if (error instanceof RateLimitedError) {
      opts.gate.backoff?.(opts.chatKey, error.retryAfterMs, error.global);
      if (++counts.rateWaits > maxRateWaits) {
        counts.rateWaits = 0;
        if (isFinal) failFinal(error);
        return;
      }
      await retryAfter(error.retryAfterMs, isFinal, content);
      return;
    }
    if (error instanceof RejectedContentError) {
      // Sending the same text again cannot help; a newer text may.
      if (isFinal) failFinal(error);
      else rejected = content;
      return;
    }
    if (!isFinal && opts.signal?.aborted) return; // a cancelled intermediate is just dropped
    if (++counts.transient > maxTransient) {
      counts.transient = 0;
      if (isFinal) failFinal(error);
      return;
    }
    await retryAfter(transientDelay(counts.transient), isFinal, content);
  };

  const pump = async (): Promise<void> => {
    const counts = { transient: 0, rateWaits: 0 };
    for (;;) {
      const job = nextJob();
      if (!job) return;
      if (!(await awaitSlot(job))) continue;

      // Pull mode: render now, with the slot in hand, so the request carries the freshest content.
      if (!job.final && stale && !closed) {
        stale = false;
        opts.produce?.();
      }
      // Newest wins: take what is wanted *now*, after the wait.
      const current = nextJob();
      if (!current) continue;
      const content = current.final ? (final as FinalRequest<T>).content : (pending as T);
      if (!current.final) {
        pending = undefined;
        force = false;
      }
      if (opts.spacing) opts.spacing.lastStartAt = now();

      // A flush may have arrived while this slot was awaited: the request then carries the final's signal.
      const requestSignal = current.final ? final?.signal : opts.signal;
      let failure: { error: unknown } | undefined;
      try {
        await opts.apply(content, { final: current.final, ...(requestSignal ? { signal: requestSignal } : {}) });
      } catch (error) {
        failure = { error };
      }
      opts.gate.settled?.(opts.chatKey);
      if (failure) {
        await onRequestFailed(failure.error, current.final, content, counts);
        continue;
      }
      visible = content;
      visibleFinal = current.final;
      counts.transient = 0;
      counts.rateWaits = 0;
      opts.onApplied?.(content, current.final);
    }
  };

  const kick = () => {
    if (running) return;
    running = pump()
      .catch(failFinal) // a bug in a callback must not leave flush() hanging
      .finally(() => {
        running = undefined;
        // Work that arrived while the pump was finishing.
        if (nextJob()) kick();
      });
  };

  return {
    update(content) {
      if (closed) return;
      pending = content;
      kick();
    },
    invalidate() {
      if (closed) return;
      stale = true;
      kick();
    },
    flush(content, flushOpts) {
      closed = true;
      pending = undefined;
      stale = false;
      upgradeWait?.();
      if (final) {
        // A newer final text replaces the one not yet sent; the same promise covers both.
        final.content = content;
        kick();
        return final.promise;
      }
      let resolve!: () => void;
      let reject!: (error: unknown) => void;
      const promise = new Promise<void>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      final = { content, resolve, reject, promise, ...(flushOpts?.signal ? { signal: flushOpts.signal } : {}) };
      kick();
      return promise;
    },
    refresh() {
      if (closed || visible === undefined) return;
      if (pending === undefined) pending = visible;
      force = true;
      kick();
    },
    async cancel() {
      pending = undefined;
      force = false;
      stale = false;
      // An intermediate still waiting for a slot has nothing left to send: stop waiting (a request in flight finishes).
      upgradeWait?.();
      await running;
    },
    get visible() {
      return visible;
    },
  };
}
