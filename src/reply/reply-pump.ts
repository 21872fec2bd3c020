/**
 * One pump per reply: take a slot (the reply's spacing, then the gate), render the view if it
 * changed, send or edit the first message that differs from what the chat shows, repeat until none
 * differs. Drafts (Telegram private chats) are a second lane of the same pump, on the chat's draft key.
 * One request in flight per lane; message i+1 is touched only once message i shows what is wanted,
 * so the reply fills from the top and a sent message's id is in the journal before anything else.
 * A message with its final text is never edited again, an equal text never sent twice; a 429 holds
 * the chat and the lane until `retry_after`, then the newest text goes. Every wait is a timer or the gate.
 */
import { RateLimitedError, RejectedContentError, type RenderedText, type ReplyPort } from "../contracts/reply-port.js";
import type { ReplyJournal } from "../contracts/reply-journal.js";
import { abortableSleep } from "../shared/abortable-sleep.js";
import { draftPacingKey } from "../contracts/platform-pacing.js";
import type { RateGate } from "./rate-gate.js";

/** What one message should show. */
export type Wanted = { content: RenderedText; final: boolean };
/** The rendered view: each message's text top to bottom (undefined: leave it as it is), and the draft. */
export type ReplyPlan = { messages: (Wanted | undefined)[]; draft?: RenderedText };

export interface ReplyPumpOptions {
  port: Pick<ReplyPort, "send" | "edit" | "draft" | "limits">;
  journal: ReplyJournal;
  chatKey: string;
  gate: RateGate;
  /** The view, rendered now; `final`: every message's last text. */
  render(final: boolean): ReplyPlan;
  /** What a message of the reply that the final view does not need shows at the end. */
  leftover: RenderedText;
  /** Cancels waits and requests of intermediate texts (/stop); `finalSignal` those of final texts. */
  signal?: AbortSignal;
  finalSignal?: AbortSignal;
  /** Drafts (the port has `draft`): their id (default random), re-sent after this long unchanged (default 20 s). */
  draftId?: number;
  draftKeepAliveMs?: number;
  /** Once, when something of the reply is visible (a retried job's message is at once). */
  onFirstVisible?(): void;
  now?(): number;
}

interface Lane {
  key: string;
  interval(): number;
  /** The view's changes are this lane's to show. */
  live(): boolean;
  wanted(): (Wanted | undefined)[];
  put(i: number, want: Wanted, signal: AbortSignal | undefined): Promise<void>;
  shown: (Wanted | undefined)[];
  refused: (RenderedText | undefined)[];
  lastStart?: number;
  running?: Promise<void>;
}

/** Equal rendered texts are never sent twice. */
export const sameRendered = (a: RenderedText | undefined, b: RenderedText): boolean =>
  a !== undefined && a.text === b.text && a.parseMode === b.parseMode;

/** Creates the pump of one reply (see the module comment). */
export function createReplyPump(o: ReplyPumpOptions) {
  const now = o.now ?? Date.now;
  const { port } = o;
  const ids = [...o.journal.messageIds];
  let recorded = ids.length;
  let plan: ReplyPlan = { messages: [] };
  let stale = false;
  let ending = false;
  let failure: { error: unknown } | undefined;
  let renderError: { error: unknown } | undefined;
  // Cuts an intermediate's wait short when the reply ends: what is wanted then is asked for as a final.
  const end = new AbortController();
  const waitSignal = o.signal ? AbortSignal.any([o.signal, end.signal]) : end.signal;
  let keepAlive: ReturnType<typeof setTimeout> | undefined;
  let onVisible = () => {
    onVisible = () => undefined;
    o.onFirstVisible?.();
  };

  const lane = (parts: Omit<Lane, "shown" | "refused">): Lane => ({ ...parts, shown: [], refused: [] });
  const messages = lane({
    key: o.chatKey,
    interval: () => port.limits.minEditIntervalMs,
    live: () => !drafts,
    wanted: () => (failure ? [] : plan.messages),
    async put(i, want, signal) {
      const opts = { continuation: i > 0, final: want.final, ...(signal ? { signal } : {}) };
      const id = ids[i];
      if (id === undefined) ids[i] = await port.send(want.content, opts);
      if (recorded <= i) {
        await o.journal.record(ids.slice(0, i + 1));
        recorded = i + 1;
      }
      if (id !== undefined) await port.edit(id, want.content, opts);
    },
  });
  const draft = port.draft?.bind(port);
  const draftId = o.draftId ?? 1 + Math.floor(Math.random() * 2_147_483_646);
  const drafts = draft
    ? lane({
        key: draftPacingKey(o.chatKey),
        interval: () => port.limits.draftIntervalMs ?? port.limits.minEditIntervalMs,
        live: () => !ending,
        wanted: () => (ending || !plan.draft ? [] : [{ content: plan.draft, final: false }]),
        async put(_i, want, signal) {
          await draft(draftId, want.content, signal ? { signal } : {});
          clearTimeout(keepAlive);
          if (ending) return;
          keepAlive = setTimeout(() => {
            drafts!.shown = []; // an unchanged draft is sent again before the platform drops it
            kick(drafts!);
          }, o.draftKeepAliveMs ?? 20_000);
        },
      })
    : undefined;
  const lanes = drafts ? [messages, drafts] : [messages];
  if (ids.length > 0 && !drafts) onVisible();

  /** The first message that differs from what the chat shows. */
  const next = (lane: Lane): { i: number; want: Wanted } | undefined => {
    for (const [i, want] of lane.wanted().entries()) {
      const seen = lane.shown[i];
      if (!want || seen?.final || (!want.final && sameRendered(seen?.content, want.content))) continue;
      return want.final || !sameRendered(lane.refused[i], want.content) ? { i, want } : undefined;
    }
    return undefined;
  };
  const wants = (lane: Lane): boolean =>
    (ending || !o.signal?.aborted) && (next(lane) !== undefined || (stale && !ending && lane.live()));
  const fail = (error: unknown) => void (failure ??= { error });
  /** Waits `ms` before trying again (a final's wait cut short fails it). */
  const pause = (ms: number, final: boolean) =>
    abortableSleep(ms, final ? o.finalSignal : o.signal).catch((error: unknown) => final && fail(error));

  const run = async (lane: Lane): Promise<void> => {
    let rateWaits = 0;
    let transient = 0;
    while (wants(lane)) {
      const final = next(lane)?.want.final ?? false;
      const signal = final ? o.finalSignal : waitSignal;
      try {
        const wait = (lane.lastStart ?? Number.NEGATIVE_INFINITY) + lane.interval() - now();
        if (wait > 0) await abortableSleep(wait, signal);
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
      const job = next(lane);
      if (!job) continue;
      lane.lastStart = now();
      try {
        await lane.put(job.i, job.want, job.want.final ? o.finalSignal : o.signal);
        o.gate.settled?.(lane.key);
        lane.shown[job.i] = job.want;
        rateWaits = transient = 0;
        onVisible();
      } catch (error) {
        o.gate.settled?.(lane.key); // the next request is spaced from this one's end
        if (error instanceof RateLimitedError) {
          o.gate.backoff?.(lane.key, error.retryAfterMs, error.global);
          if (++rateWaits > 50 && job.want.final)
            fail(error); // a storm is waited out, but not forever
          else await pause(error.retryAfterMs, job.want.final);
        } else if (error instanceof RejectedContentError) {
          if (job.want.final) fail(error);
          else lane.refused[job.i] = job.want.content; // the same text again cannot help; a newer one may
        } else if (job.want.final || !o.signal?.aborted) {
          if (++transient > 4 && job.want.final) fail(error);
          else await pause(Math.min(8000, 250 * 2 ** transient), job.want.final);
        }
      }
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
    /** The view changed: it is rendered when a lane holds its next slot. */
    invalidate() {
      if (ending) return;
      stale = true;
      for (const lane of lanes) if (lane.live()) kick(lane);
    },
    /** Stops the drafts (the last one lands first), renders the final view, resolves once every message shows it. */
    async finish() {
      ending = true;
      stale = false;
      end.abort();
      clearTimeout(keepAlive);
      plan = { messages: plan.messages.map((want) => (want?.final ? want : undefined)) }; // no more live texts
      await drafts?.running; // a draft landing after the message would show a stale preview
      let thrown: { error: unknown } | undefined;
      try {
        plan = o.render(true);
      } catch (error) {
        thrown = { error }; // what was sealed still lands
      }
      for (let i = plan.messages.length; i < ids.length; i++) plan.messages[i] = { content: o.leftover, final: true };
      kick(messages);
      while (messages.running) await messages.running;
      if (failure ?? thrown) throw (failure ?? thrown)?.error;
    },
    ids: () => [...ids],
    /** The first error of rendering the live view. */
    renderError: () => renderError,
  };
}
