/**
 * The streaming reply engine: agent events in, messages in a chat out.
 *
 * - Something is visible at once: the typing indicator and a placeholder
 *   message (recorded in the journal before anything else), or the first draft
 *   when the port streams drafts natively.
 * - Events only update the state and mark the view stale; the live message's
 *   coalescing, throttled editor renders it when it holds a slot, right before
 *   its request (pull, not push): the text sent is the freshest, and the view is
 *   rendered once per request, never per token or on a timer. Sealed messages
 *   are never rendered again: only the view beyond the last seal point is.
 * - When the text outgrows the platform's limit, the current message gets its
 *   final text at a good boundary and a continuation message takes over; a
 *   finished message is never edited again.
 * - With drafts (Telegram private chats) the live tail is a draft, kept alive
 *   while idle, and the message(s) are sent when the answer ends. A draft is a
 *   preview, not a message: it is paced on its own key (`draftPacingKey`) at the
 *   port's `draftIntervalMs`, so the messages keep their own budget.
 * - A retried job gets a journal that already holds message ids: those
 *   messages are edited in order and new ones are only sent beyond them.
 * - An abort flushes what is there with a "stopped" note; a failing event
 *   stream flushes what is there (plus an optional failure line) and rethrows.
 */
import type { AgentEvent } from "../contracts/agent-events.js";
import type { RenderedText, ReplyPort } from "../contracts/reply-port.js";
import { closingFor, fenceAfter, type OpenFence } from "../shared/code-fence.js";
import { splitMarkdownPieces } from "./message-splitter.js";
import { createLocalRateGate, draftPacingKey, type RateGate } from "./rate-gate.js";
import { renderedLength, visibleText } from "./rendered-length.js";
import type { ReplyJournal } from "../contracts/reply-journal.js";
import {
  applyAgentEvent,
  emptyReplyView,
  joinSegments,
  PLACEHOLDER,
  renderReplyView,
  renderReplyViewSegments,
  stopReplyView,
  withFailureLine,
  type ShowReasoning,
} from "./reply-view.js";
import { createThrottledEditor, type RequestSpacing, type ThrottledEditor } from "./throttled-editor.js";

/** The agent's last event: why it ended and what goes into the history. */
export type FinishEvent = Extract<AgentEvent, { type: "finish" }>;

/** Everything one reply needs: the port, the events, the journal, pacing and the stop signal. */
export interface StreamReplyOptions {
  port: ReplyPort;
  /** The pacing key of the chat (a Telegram group's forum topics share the group's key). */
  chatKey: string;
  events: AsyncIterable<AgentEvent>;
  journal: ReplyJournal;
  showReasoning: ShowReasoning;
  gate: RateGate;
  /** /stop or shutdown: the reply ends with a "stopped" note (the final requests themselves are not aborted). */
  signal?: AbortSignal;
  /** Called once, as soon as something of the reply is visible (placeholder, draft, or a resumed message). */
  onFirstVisible?(): void;
  /**
   * When the event stream throws: a line to put under the reply (e.g. `modelUnavailableLine()` on the
   * final attempt), or undefined to flush what is there unchanged because a retry will continue it.
   */
  failureLine?(error: unknown): string | undefined;
  now?(): number;
  /** The draft id for `port.draft` (default: random, non-zero). */
  draftId?: number;
  /**
   * Only while a continuation waits for the message above it to land (no editor can pull then): events
   * arriving within this window are rendered together (default: a quarter of the edit interval, 40–250 ms).
   */
  renderDelayMs?: number;
  /** A draft is re-sent after this long without a change, before the platform drops it (default 20 s; Telegram keeps 30 s). */
  draftKeepAliveMs?: number;
  logger?: { warn(obj: object, msg?: string): void };
  /**
   * Applied to each rendered segment of the view before it is split into messages (e.g. secret
   * scrubbing: a secret cut in two by a split would pass a check of each message alone).
   */
  transform?(markdown: string): string;
}

/** How a reply ended. */
export interface StreamReplyResult {
  /** Every message of the reply, in order (also in the journal). */
  messageIds: string[];
  /** The whole reply as Markdown, as rendered at the end. */
  text: string;
  /** The agent's finish event, when the stream got that far. */
  finish?: FinishEvent;
  /** The reply ended because of the abort signal (or the agent reported `aborted`). */
  stopped: boolean;
}

/** What replaces the text of a message left over from an earlier attempt that the new answer does not need. */
export const SUPERSEDED_TEXT = "⋯";

/** Everything before segment `seg`, offset `offset` of the view is in earlier (final) messages. */
interface SealPoint {
  seg: number;
  offset: number;
  /** A code fence open at that point (the next message reopens it). */
  fence?: OpenFence;
}

interface Slot {
  id?: string;
  recorded: boolean;
  /** Settles when the slot's id is in the journal (the next message waits for it, so ids stay in order). */
  idKnown: Promise<void>;
  failIdKnown(error: unknown): void;
  editor: ThrottledEditor<RenderedText>;
  /** Settles (never rejects) once the message's final text landed or failed: the next message waits for it. */
  finalLanded?: Promise<void>;
  landed: boolean;
}

const sameRendered = (a: RenderedText, b: RenderedText) => a.text === b.text && a.parseMode === b.parseMode;
const isBlank = (content: RenderedText) => visibleText(content).trim() === "";
const ABORTED = Symbol("aborted");

/** Streams an answer into the chat; resolves when its final text is visible (see the module comment). */
export async function streamReply(opts: StreamReplyOptions): Promise<StreamReplyResult> {
  const { port, chatKey, journal, gate, signal } = opts;
  const now = opts.now ?? Date.now;
  const limit = port.limits.maxLength;
  // The splitter measures the whole live tail first and the live text is then formatted once more: one
  // remembered result makes that the same work (formatting is most of the cost of a redraw).
  let lastFormat: { markdown: string; rendered: RenderedText; visible?: string } | undefined;
  const formatted = (markdown: string) => {
    if (lastFormat?.markdown !== markdown) lastFormat = { markdown, rendered: port.format(markdown) };
    return lastFormat;
  };
  const format = (markdown: string): RenderedText => formatted(markdown).rendered;
  /** What the user would see of `markdown` once formatted (its length is what the platform's limit counts). */
  const visibleOf = (markdown: string): string => {
    const known = formatted(markdown);
    return (known.visible ??= visibleText(known.rendered));
  };
  const measure = (markdown: string): number => visibleOf(markdown).length;
  // Read on every request: a port learns its pacing from the platform's answers (Discord's rate-limit headers).
  const spacing: RequestSpacing = {
    get minIntervalMs() {
      return port.limits.minEditIntervalMs;
    },
  };
  const existing = [...journal.messageIds];
  const ids: string[] = [...existing];
  const slots: Slot[] = [];
  const finals: Promise<void>[] = [];
  const draft = port.draft?.bind(port);
  const draftId = opts.draftId ?? 1 + Math.floor(Math.random() * 2_147_483_646);
  // Rendering (and measuring) is the costly part; an editor sends at most once per interval anyway.
  const renderDelayMs = opts.renderDelayMs ?? Math.min(250, Math.max(40, Math.floor(port.limits.minEditIntervalMs / 4)));
  const keepAliveMs = opts.draftKeepAliveMs ?? 20_000;

  let state = emptyReplyView();
  let seal: SealPoint = { seg: 0, offset: 0 };
  let current = 0;
  let firstVisible = false;
  let renderTimer: ReturnType<typeof setTimeout> | undefined;
  let keepAliveTimer: ReturnType<typeof setTimeout> | undefined;
  let renderFailure: { error: unknown } | undefined;
  let ending = false;
  /** Events changed the view since it was last rendered. */
  let viewStale = false;

  const markVisible = () => {
    if (firstVisible) return;
    firstVisible = true;
    opts.onFirstVisible?.();
  };

  /** Pull mode: the editor holding a slot asks for the view now; it is rendered only if something changed. */
  const produce = () => {
    if (!viewStale) return;
    viewStale = false;
    try {
      render(false);
    } catch (error) {
      renderFailure ??= { error }; // surfaced by the event loop below
    }
  };

  const editorBase = { chatKey, gate, equals: sameRendered, spacing, now, produce, ...(signal ? { signal } : {}) };

  const slotAt = (index: number): Slot => {
    const known = slots[index];
    if (known) return known;
    let markKnown!: () => void;
    let failKnown!: (error: unknown) => void;
    const idKnown = new Promise<void>((resolve, reject) => {
      markKnown = resolve;
      failKnown = reject;
    });
    idKnown.catch(() => undefined); // observed through the next message's apply, not here
    const recorded = index < existing.length;
    const slot: Slot = {
      ...(recorded ? { id: existing[index] } : {}),
      recorded,
      idKnown,
      failIdKnown: failKnown,
      landed: false,
      editor: createThrottledEditor<RenderedText>({
        ...editorBase,
        apply: async (content, { final, signal: requestSignal }) => {
          const sendOpts = { continuation: index > 0, final, ...(requestSignal ? { signal: requestSignal } : {}) };
          let fresh = false;
          if (slot.id === undefined) {
            if (index > 0) await slotAt(index - 1).idKnown;
            slot.id = await port.send(content, sendOpts);
            fresh = true;
          }
          if (!slot.recorded) {
            // Recorded before anything else happens to this reply, so a retried job finds it.
            ids[index] = slot.id;
            await journal.record([...ids]);
            slot.recorded = true;
            markKnown();
          }
          if (!fresh) await port.edit(slot.id, content, sendOpts);
          markVisible();
        },
      }),
    };
    if (recorded) markKnown();
    slots[index] = slot;
    return slot;
  };

  /** Resolves when the message before `index` has its final text (messages fill top to bottom). */
  const previousLanded = (index: number): Promise<void> | undefined => {
    const prev = index > 0 ? slots[index - 1] : undefined;
    return prev && !prev.landed ? prev.finalLanded : undefined;
  };

  const finalise = (index: number, content: RenderedText) => {
    const slot = slotAt(index);
    const before = previousLanded(index);
    // The reader sees the reply fill from the top: a continuation's last text never lands before the
    // text of the message above it.
    const done = before ? before.then(() => slot.editor.flush(content)) : slot.editor.flush(content);
    slot.finalLanded = done.then(
      () => undefined,
      () => undefined,
    );
    void slot.finalLanded.then(() => {
      slot.landed = true;
    });
    // A message whose final text cannot land must not leave the next one waiting for its id forever.
    done.catch((error: unknown) => slot.failIdKnown(error));
    finals.push(done);
  };

  const armKeepAlive = () => {
    if (keepAliveTimer !== undefined) clearTimeout(keepAliveTimer);
    keepAliveTimer = undefined;
    if (ending) return; // the answer is being sent as a message: no draft may follow it
    keepAliveTimer = setTimeout(() => {
      keepAliveTimer = undefined;
      draftEditor?.refresh();
    }, keepAliveMs);
  };

  // Drafts are previews, not messages: their own pace and budget, so the messages' slots stay for the finals.
  const draftSpacing: RequestSpacing = {
    get minIntervalMs() {
      return port.limits.draftIntervalMs ?? port.limits.minEditIntervalMs;
    },
  };
  const draftEditor = draft
    ? createThrottledEditor<RenderedText>({
        ...editorBase,
        chatKey: draftPacingKey(chatKey),
        spacing: draftSpacing,
        apply: async (content, { signal: requestSignal }) => {
          await draft(draftId, content, requestSignal ? { signal: requestSignal } : {});
          markVisible();
        },
        onApplied: armKeepAlive,
      })
    : undefined;

  // A continuation's live text waits (newest wins) until the message above it has its final text.
  let heldBack: { index: number; content: RenderedText } | undefined;
  const showLive = (content: RenderedText) => {
    if (draftEditor) {
      draftEditor.update(content);
      return;
    }
    const index = current;
    const before = previousLanded(index);
    if (!before) {
      slotAt(index).editor.update(content);
      return;
    }
    const waiting = heldBack !== undefined && heldBack.index === index;
    heldBack = { index, content };
    if (waiting) return;
    void before.then(() => {
      const held = heldBack;
      if (!held || held.index !== index || ending) return;
      heldBack = undefined;
      slotAt(index).editor.update(held.content);
    });
  };

  /** Re-renders the view and hands it to the editors; `final` gives every remaining message its last text. */
  const render = (final: boolean) => {
    const rendered = renderReplyViewSegments(state, { showReasoning: opts.showReasoning });
    const segments = opts.transform ? rendered.map((segment) => opts.transform!(segment)) : rendered;
    const rest = remainderOf(segments, seal);
    if (rest.text.trim() !== "") {
      const pieces = splitMarkdownPieces(rest.text, { limit, measure, ...(seal.fence ? { openFence: seal.fence } : {}) });
      let k = 0;
      for (; k < pieces.length - 1; k++) {
        const piece = pieces[k]!;
        if (rest.text.slice(piece.end).trim() === "") break; // only whitespace beyond: nothing to continue with
        const content = format(piece.text);
        // A platform refuses an empty message (e.g. a piece that is only an empty code block in Telegram).
        finalise(current, isBlank(content) ? port.format(SUPERSEDED_TEXT) : content);
        current++;
        seal = rest.pointAt(piece.end);
      }
      const liveMarkdown = pieces[k]!.text;
      const live = format(liveMarkdown);
      if (visibleOf(liveMarkdown).trim() !== "") {
        if (final) {
          finalise(current, live);
          current++;
        } else {
          showLive(live);
        }
        return;
      }
    }
    // Nothing to show beyond what earlier messages hold.
    if (current > 0) {
      // A message opened for text that vanished since (a "thinking" line) still needs a final state.
      if (final && slots[current]) {
        finalise(current, port.format(SUPERSEDED_TEXT));
        current++;
      }
      return;
    }
    const placeholder = port.format(PLACEHOLDER);
    if (!final) showLive(placeholder);
    else if (!draftEditor || existing.length > 0) {
      finalise(0, placeholder);
      current = 1;
    }
  };

  const scheduleRender = () => {
    if (renderTimer !== undefined) return;
    renderTimer = setTimeout(() => {
      renderTimer = undefined;
      produce();
    }, renderDelayMs);
  };

  /** The view changed: the live editor pulls it when it has a slot (a held-back continuation is rendered on a timer). */
  const invalidate = () => {
    viewStale = true;
    if (draftEditor) draftEditor.invalidate();
    else if (!previousLanded(current)) slotAt(current).editor.invalidate();
    else scheduleRender();
  };

  /** Whether an event changes what the view shows (a collapsed or hidden reasoning delta does not). */
  const changesView = (before: typeof state, after: typeof state, event: AgentEvent) => {
    if (after === before) return false;
    if (event.type === "reasoning-delta" && opts.showReasoning !== "full") return after.blocks.length !== before.blocks.length;
    return true;
  };

  // --- something visible at once -------------------------------------------------------------
  port.typing?.(signal ? { signal } : {}).catch((error: unknown) => opts.logger?.warn({ err: error }, "typing indicator failed"));
  if (draftEditor) draftEditor.update(port.format(PLACEHOLDER));
  else if (existing.length === 0) slotAt(0).editor.update(port.format(PLACEHOLDER));
  else markVisible(); // a retried job: its message is already there

  // --- the events ------------------------------------------------------------------------------
  let finish: FinishEvent | undefined;
  let stopped = false;
  let streamError: { error: unknown } | undefined;
  const iterator = opts.events[Symbol.asyncIterator]();
  let onAbort: (() => void) | undefined;
  const aborted = signal
    ? new Promise<typeof ABORTED>((resolve) => {
        onAbort = () => resolve(ABORTED);
        if (signal.aborted) onAbort();
        else signal.addEventListener("abort", onAbort, { once: true });
      })
    : undefined;
  try {
    for (;;) {
      if (renderFailure) throw renderFailure.error;
      const next = iterator.next();
      const step = aborted ? await Promise.race([next, aborted]) : await next;
      if (step === ABORTED) {
        stopped = true;
        // The loop is being cancelled by the same signal; whatever it still yields or throws is moot.
        next.catch(() => undefined);
        iterator.return?.(undefined)?.catch(() => undefined);
        break;
      }
      if (step.done) break;
      const before = state;
      state = applyAgentEvent(state, step.value);
      if (step.value.type === "finish") finish = step.value;
      if (changesView(before, state, step.value)) invalidate();
    }
  } catch (error) {
    if (signal?.aborted) stopped = true;
    else streamError = { error };
  } finally {
    if (onAbort) signal?.removeEventListener("abort", onAbort);
    if (renderTimer !== undefined) clearTimeout(renderTimer);
    renderTimer = undefined;
  }
  if (finish?.reason === "aborted") stopped = true;

  // --- the final text --------------------------------------------------------------------------
  if (stopped) state = stopReplyView(state);
  if (streamError) {
    const line = opts.failureLine?.(streamError.error);
    if (line) state = withFailureLine(state, line);
  }
  ending = true;
  viewStale = false; // from here on only the final render below shows the view (no late intermediate pull)
  if (keepAliveTimer !== undefined) clearTimeout(keepAliveTimer);
  keepAliveTimer = undefined;
  // A draft landing after the message would show a stale preview: let the last one finish first.
  await draftEditor?.cancel();
  let renderError: { error: unknown } | undefined;
  try {
    render(true);
    // Messages of an earlier attempt that this answer does not need any more.
    for (let index = current; index < existing.length; index++) finalise(index, port.format(SUPERSEDED_TEXT));
  } catch (error) {
    renderError = { error };
  }
  const settled = await Promise.allSettled(finals);
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === "rejected");
  if (streamError) {
    if (failed || renderError) {
      opts.logger?.warn({ err: failed?.reason ?? renderError?.error }, "could not flush the reply after the event stream failed");
    }
    throw streamError.error;
  }
  if (renderError) throw renderError.error;
  if (failed) throw failed.reason;
  return {
    messageIds: [...ids],
    text: renderReplyView(state, { showReasoning: opts.showReasoning }),
    ...(finish ? { finish } : {}),
    stopped,
  };
}

/** The view from a seal point on, and how to turn an offset in it back into a seal point. */
function remainderOf(segments: readonly string[], seal: SealPoint): { text: string; pointAt(offset: number): SealPoint } {
  let text = "";
  const parts: { at: number; seg: number; from: number; length: number }[] = [];
  for (let s = seal.seg; s < segments.length; s++) {
    const segment = segments[s] as string;
    const from = s === seal.seg ? Math.min(seal.offset, segment.length) : 0;
    const body = segment.slice(from);
    if (body === "") continue;
    if (text !== "") {
      // Same joining as the whole view: a fence left open by a segment is closed before the next.
      const open = fenceAfter(text, seal.fence);
      text += open ? `${closingFor(text, open)}\n\n` : "\n\n";
    }
    parts.push({ at: text.length, seg: s, from, length: body.length });
    text += body;
  }
  return {
    text,
    pointAt(offset) {
      for (let i = parts.length - 1; i >= 0; i--) {
        const part = parts[i]!;
        if (offset >= part.at) {
          const into = Math.min(offset - part.at, part.length);
          const fence = fenceAfter(text.slice(0, part.at + into), seal.fence);
          return { seg: part.seg, offset: part.from + into, ...(fence ? { fence } : {}) };
        }
        const previous = parts[i - 1];
        if (previous && offset >= previous.at + previous.length) {
          // Inside the separator: continue at the start of this part.
          const fence = fenceAfter(text.slice(0, part.at), seal.fence);
          return { seg: part.seg, offset: part.from, ...(fence ? { fence } : {}) };
        }
      }
      return seal;
    },
  };
}

/** Options of `showFailure`. */
export interface ShowFailureOptions {
  /** What the reply's last message shows now, as Markdown; the line is appended to it. Without it the line replaces the text. */
  previousMarkdown?: string;
  gate?: RateGate;
  chatKey?: string;
  signal?: AbortSignal;
}

/**
 * Puts a final failure line (e.g. "model unavailable") into a reply's last message, or sends it as the
 * first message when the journal has none. For the worker's give-up path, where no stream is running.
 */
export async function showFailure(port: ReplyPort, journal: ReplyJournal, line: string, opts: ShowFailureOptions = {}): Promise<void> {
  const ids = [...journal.messageIds];
  const continuation = ids.length > 1;
  let target = ids[ids.length - 1];
  let recorded = target !== undefined;
  let content = port.format(opts.previousMarkdown?.trim() ? joinSegments([opts.previousMarkdown, line]) : line);
  if (renderedLength(content) > port.limits.maxLength) content = port.format(line);
  const editor = createThrottledEditor<RenderedText>({
    chatKey: opts.chatKey ?? "failure",
    gate: opts.gate ?? createLocalRateGate({ minIntervalMs: 0 }),
    equals: sameRendered,
    apply: async (rendered, { final }) => {
      const sendOpts = { final, continuation, ...(opts.signal ? { signal: opts.signal } : {}) };
      let fresh = false;
      if (target === undefined) {
        target = await port.send(rendered, sendOpts);
        fresh = true;
      }
      if (!recorded) {
        await journal.record([...ids, target]);
        recorded = true;
      }
      if (!fresh) await port.edit(target, rendered, sendOpts);
    },
  });
  await editor.flush(content, opts.signal ? { signal: opts.signal } : {});
}
