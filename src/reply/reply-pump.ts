/**
 * One pump per reply. A lane takes a slot (the reply's own spacing, then the gate), renders the
 * view if it changed, and sends or edits the first message that differs from what the chat shows;
 * then it repeats, and stops when nothing differs. Telegram drafts are a second lane of the same
 * pump, paced on the chat's draft key. Every wait is a timer or the gate; nothing polls.
 *
 * - At most one message request in flight, messages filled from the top: message i+1 is touched
 *   only once message i shows what is wanted (its final text, once it is sealed), so ids stay in order
 *   and a message's id is in the journal before anything else happens to the reply.
 * - A message that shows its final text is never edited again; an equal text is never sent twice.
 * - A 429 holds the chat (`gate.backoff`) and the lane until `retry_after`; then the newest text goes.
 * - `finish` stops the drafts (the last one lands first), renders the final view and resolves when
 *   every message shows its final text; rejected content or exhausted retries of a final reject it.
 */
import { RateLimitedError, RejectedContentError, type RenderedText, type ReplyPort } from "../contracts/reply-port.js";
import type { ReplyJournal } from "../contracts/reply-journal.js";
import { abortableSleep } from "../shared/abortable-sleep.js";
import { draftPacingKey, type RateGate } from "./rate-gate.js";

/** What one message should show. */
export interface Wanted {
  content: RenderedText;
  final: boolean;
}

/** The rendered view: each message's text top to bottom (undefined: leave it as it is), and the draft. */
export interface ReplyPlan {
  messages: (Wanted | undefined)[];
  draft?: RenderedText;
}

/** What a pump needs. */
export interface ReplyPumpOptions {
  port: Pick<ReplyPort, "send" | "edit" | "draft" | "limits">;
  journal: ReplyJournal;
  chatKey: string;
  gate: RateGate;
  /** The view, rendered now; `final`: every message's last text. */
  render(final: boolean): ReplyPlan;
  /** What a message of the reply that the final view no longer needs shows at the end. */
  leftover: RenderedText;
  /** Cancels waits and requests of intermediate texts (/stop). */
  signal?: AbortSignal;
  /** Cancels the final texts' requests. */
  finalSignal?: AbortSignal;
  /** Streams the live tail as drafts with this id (when the port has `draft`). */
  draftId?: number;
  /** A draft is re-sent after this long without a change, before the platform drops it. */
  keepAliveMs?: number;
  /** After every request that made something visible. */
  onVisible?(): void;
  now?(): number;
}

/** The pump of one reply. */
export interface ReplyPump {
  /** The view changed: it is rendered when a lane holds its next slot. */
  invalidate(): void;
  /** Renders the final view; resolves when every message shows its final text. */
  finish(): Promise<void>;
  /** Every message id known so far, in order. */
  ids(): string[];
  /** The first error of rendering the live view. */
  readonly renderError: { error: unknown } | undefined;
}

interface Job {
  final: boolean;
  run(signal: AbortSignal | undefined): Promise<void>;
  refuse(): void;
}

interface Lane {
  key: string;
  interval(): number;
  /** The view's changes are this lane's business (messages without drafts, or the drafts). */
  live(): boolean;
  next(): Job | undefined;
  lastStart?: number;
  running?: Promise<void>;
}

const MAX_TRANSIENT_RETRIES = 4;
const MAX_RATE_LIMIT_WAITS = 50;
const transientDelay = (attempt: number) => Math.min(8000, 500 * 2 ** (attempt - 1));

/** Equal rendered texts are never sent twice. */
export const sameRendered = (a: RenderedText | undefined, b: RenderedText): boolean =>
  a !== undefined && a.text === b.text && a.parseMode === b.parseMode;

/** Creates the pump of one reply (see the module comment). */
export function createReplyPump(o: ReplyPumpOptions): ReplyPump {
  const now = o.now ?? Date.now;
  const { port } = o;
  const ids = [...o.journal.messageIds];
  let recorded = ids.length;
  const shown: (Wanted | undefined)[] = [];
  const refused: (RenderedText | undefined)[] = [];
  let plan: ReplyPlan = { messages: [] };
  let stale = false;
  let ending = false;
  /** The final view is rendered (from `finish`, once the drafts stopped). */
  let finalPlan = false;
  let failure: { error: unknown } | undefined;
  let renderError: { error: unknown } | undefined;
  // Cuts an intermediate's wait short when the reply ends: what is wanted then is asked for as a final.
  const end = new AbortController();
  const waitSignal = o.signal ? AbortSignal.any([o.signal, end.signal]) : end.signal;
  const drafts = port.draft && o.draftId !== undefined ? { draft: port.draft.bind(port), id: o.draftId } : undefined;
  let draftShown: RenderedText | undefined;
  let draftRefused: RenderedText | undefined;
  let refresh = false;
  let keepAlive: ReturnType<typeof setTimeout> | undefined;

  /** Sends or edits message `i` (a sent message's id is recorded before anything else). */
  const put = async (i: number, want: Wanted, signal: AbortSignal | undefined) => {
    const opts = { continuation: i > 0, final: want.final, ...(signal ? { signal } : {}) };
    const id = ids[i];
    if (id === undefined) ids[i] = await port.send(want.content, opts);
    if (recorded <= i) {
      await o.journal.record(ids.slice(0, i + 1));
      recorded = i + 1;
    }
    if (id !== undefined) await port.edit(id, want.content, opts);
    shown[i] = want;
  };

  const messages: Lane = {
    key: o.chatKey,
    interval: () => port.limits.minEditIntervalMs,
    live: () => !drafts,
    next() {
      if (failure || (ending && !finalPlan)) return undefined;
      for (const [i, want] of plan.messages.entries()) {
        const seen = shown[i];
        if (!want || seen?.final || (sameRendered(seen?.content, want.content) && !want.final)) continue;
        if (!want.final && sameRendered(refused[i], want.content)) return undefined;
        return { final: want.final, run: (signal) => put(i, want, signal), refuse: () => (refused[i] = want.content) };
      }
      return undefined;
    },
  };

  const armKeepAlive = () => {
    clearTimeout(keepAlive);
    if (ending || o.keepAliveMs === undefined) return;
    keepAlive = setTimeout(() => {
      refresh = true;
      kick(draftLane);
    }, o.keepAliveMs);
  };
  const draftLane: Lane = {
    key: draftPacingKey(o.chatKey),
    interval: () => port.limits.draftIntervalMs ?? port.limits.minEditIntervalMs,
    live: () => !ending,
    next() {
      const content = plan.draft;
      if (ending || !drafts || !content || sameRendered(draftRefused, content)) return undefined;
      if (!refresh && sameRendered(draftShown, content)) return undefined;
      return {
        final: false,
        async run(signal) {
          await drafts.draft(drafts.id, content, signal ? { signal } : {});
          draftShown = content;
          refresh = false;
          armKeepAlive();
        },
        refuse: () => (draftRefused = content),
      };
    },
  };
  const lanes = drafts ? [messages, draftLane] : [messages];

  const wants = (lane: Lane): boolean =>
    (ending || !o.signal?.aborted) && (lane.next() !== undefined || (stale && !ending && lane.live()));

  const fail = (error: unknown) => {
    failure ??= { error };
  };

  /** Waits `ms` before trying again; false when the wait was cut short. */
  const pause = (ms: number, final: boolean): Promise<boolean> =>
    abortableSleep(ms, final ? o.finalSignal : o.signal).then(
      () => true,
      (error: unknown) => {
        if (final) fail(error);
        return false;
      },
    );

  const run = async (lane: Lane): Promise<void> => {
    let rateWaits = 0;
    let transient = 0;
    while (wants(lane)) {
      const final = lane.next()?.final ?? false;
      const signal = final ? o.finalSignal : waitSignal;
      try {
        if (lane.lastStart !== undefined) await abortableSleep(lane.lastStart + lane.interval() - now(), signal);
        await o.gate.acquire(lane.key, final ? "final" : "intermediate", signal);
      } catch (error) {
        if (final) fail(error);
        if (final || !ending) return;
        continue; // the reply ended while an intermediate waited: ask again for what is wanted now
      }
      // Rendered with the slot in hand, so the request carries the newest view.
      if (stale && !ending) {
        stale = false;
        try {
          plan = o.render(false);
        } catch (error) {
          renderError ??= { error };
        }
        for (const other of lanes) if (other !== lane) kick(other);
      }
      const job = lane.next();
      if (!job) continue;
      lane.lastStart = now();
      const requestSignal = job.final ? o.finalSignal : o.signal;
      try {
        await job.run(requestSignal);
        rateWaits = 0;
        transient = 0;
        o.onVisible?.();
      } catch (error) {
        o.gate.settled?.(lane.key);
        if (error instanceof RateLimitedError) {
          o.gate.backoff?.(lane.key, error.retryAfterMs, error.global);
          if (++rateWaits > MAX_RATE_LIMIT_WAITS && job.final) return fail(error);
          await pause(error.retryAfterMs, job.final);
        } else if (error instanceof RejectedContentError) {
          // The same text again cannot help; a newer one may.
          if (job.final) return fail(error);
          job.refuse();
        } else if (job.final || !o.signal?.aborted) {
          if (++transient > MAX_TRANSIENT_RETRIES && job.final) return fail(error);
          await pause(transientDelay(Math.min(transient, MAX_TRANSIENT_RETRIES)), job.final);
        }
        continue;
      }
      o.gate.settled?.(lane.key);
    }
  };

  function kick(lane: Lane): void {
    if (lane.running || !wants(lane)) return;
    lane.running = run(lane)
      .catch(fail) // a bug in a port or the renderer must not leave finish() hanging
      .finally(() => {
        lane.running = undefined;
        kick(lane);
      });
  }

  return {
    invalidate() {
      if (ending) return;
      stale = true;
      for (const lane of lanes) if (lane.live()) kick(lane);
    },
    async finish() {
      ending = true;
      stale = false;
      end.abort();
      clearTimeout(keepAlive);
      // A draft landing after the message would show a stale preview: the last one finishes first.
      await draftLane.running;
      let thrown: { error: unknown } | undefined;
      try {
        plan = o.render(true);
      } catch (error) {
        // Whatever was sealed still lands; the error is the reply's.
        plan = { messages: plan.messages.filter((want) => want?.final) };
        thrown = { error };
      }
      for (let i = plan.messages.length; i < ids.length; i++) plan.messages[i] = { content: o.leftover, final: true };
      finalPlan = true;
      kick(messages);
      while (messages.running) await messages.running;
      if (failure ?? thrown) throw (failure ?? thrown)?.error;
    },
    ids: () => [...ids],
    get renderError() {
      return renderError;
    },
  };
}
