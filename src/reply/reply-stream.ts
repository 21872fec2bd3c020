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
 *
 * The pieces: view-layout.ts (what is sealed, what is live), message-chain.ts (the
 * messages, their journal and top-down landing), reply-surfaces.ts (the live tail as
 * the last message or as a draft); this file drives them from the agent's events.
 */
import type { AgentEvent } from "../contracts/agent-events.js";
import type { RenderedText, ReplyPort } from "../contracts/reply-port.js";
import type { ReplyJournal } from "../contracts/reply-journal.js";
import { createMessageChain, type MessageChain } from "./message-chain.js";
import { createLocalRateGate, type RateGate } from "./rate-gate.js";
import { renderedLength, visibleText } from "./rendered-length.js";
import { createDraftSurface, createMessageSurface, type LiveSurface } from "./reply-surfaces.js";
import {
  applyAgentEvent,
  emptyReplyView,
  joinSegments,
  PLACEHOLDER,
  renderReplyView,
  renderReplyViewSegments,
  stopReplyView,
  withFailureLine,
  type ReplyViewState as ReplyView,
  type ShowReasoning,
} from "./reply-view.js";
import type { RequestSpacing } from "./throttled-editor.js";
import { layoutView, UNSEALED, type SealPoint } from "./view-layout.js";

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
  /** Show the typing indicator at the start (default true; false when the adapter showed it moments ago). */
  typing?: boolean;
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

const ABORTED = Symbol("aborted");

/** Formatting with a memory of the last text: the splitter measures the live tail and it is then formatted once more. */
function memoFormat(port: ReplyPort) {
  let last: { markdown: string; rendered: RenderedText; visible?: string } | undefined;
  const formatted = (markdown: string) => {
    if (last?.markdown !== markdown) last = { markdown, rendered: port.format(markdown) };
    return last;
  };
  return {
    format: (markdown: string): RenderedText => formatted(markdown).rendered,
    /** What the user would see of `markdown` once formatted (its length is what the platform's limit counts). */
    visibleOf(markdown: string): string {
      const known = formatted(markdown);
      return (known.visible ??= visibleText(port, known.rendered));
    },
  };
}

/** The reply's state as events arrive, and its rendering into the chain and the live surface. */
function createReplyRenderer(opts: StreamReplyOptions, chain: MessageChain, surface: () => LiveSurface) {
  const { port } = opts;
  const { format, visibleOf } = memoFormat(port);
  const measure = (markdown: string): number => visibleOf(markdown).length;
  const isBlank = (content: RenderedText) => visibleText(port, content).trim() === "";
  let state: ReplyView = emptyReplyView();
  let seal: SealPoint = UNSEALED;
  let current = 0;

  /** Re-renders the view and hands it on; `final` gives every remaining message its last text. */
  const render = (final: boolean) => {
    const rendered = renderReplyViewSegments(state, { showReasoning: opts.showReasoning });
    const segments = opts.transform ? rendered.map((segment) => opts.transform!(segment)) : rendered;
    const layout = layoutView(segments, seal, { limit: port.limits.maxLength, measure });
    for (const piece of layout.sealed) {
      const content = format(piece.markdown);
      // A platform refuses an empty message (e.g. a piece that is only an empty code block in Telegram).
      chain.finalise(current, isBlank(content) ? port.format(SUPERSEDED_TEXT) : content);
      current++;
      seal = piece.seal;
    }
    if (layout.live !== undefined && visibleOf(layout.live).trim() !== "") {
      const live = format(layout.live);
      if (final) chain.finalise(current++, live);
      else surface().show(current, live);
      return;
    }
    // Nothing to show beyond what earlier messages hold.
    if (current > 0) {
      // A message opened for text that vanished since (a "thinking" line) still needs a final state.
      if (final && chain.has(current)) chain.finalise(current++, port.format(SUPERSEDED_TEXT));
      return;
    }
    const placeholder = port.format(PLACEHOLDER);
    if (!final) surface().show(0, placeholder);
    else if (!surface().drafts || chain.existing.length > 0) {
      chain.finalise(0, placeholder);
      current = 1;
    }
  };

  return {
    render,
    get state() {
      return state;
    },
    set state(next: ReplyView) {
      state = next;
    },
    /** The index of the live message. */
    current: () => current,
    /** Messages of an earlier attempt that this answer does not need any more. */
    supersedeLeftovers() {
      for (let index = current; index < chain.existing.length; index++)
        chain.finalise(index, port.format(SUPERSEDED_TEXT));
    },
  };
}

/** Whether an event changes what the view shows (a collapsed or hidden reasoning delta does not). */
function changesView(before: ReplyView, after: ReplyView, event: AgentEvent, showReasoning: ShowReasoning): boolean {
  if (after === before) return false;
  if (event.type === "reasoning-delta" && showReasoning !== "full") return after.blocks.length !== before.blocks.length;
  return true;
}

/** Reads the agent's events into the view until they end, fail, or the signal aborts. */
async function consumeEvents(
  events: AsyncIterable<AgentEvent>,
  signal: AbortSignal | undefined,
  onEvent: (event: AgentEvent) => void,
  renderFailed: () => { error: unknown } | undefined,
): Promise<{ stopped: boolean; streamError?: { error: unknown } }> {
  const iterator = events[Symbol.asyncIterator]();
  // Each step waits on a promise of its own, settled by the next event or by the abort. (A race of every step
  // against one promise of the abort would leave a reaction on that promise per event until the reply ends.)
  let wake: ((step: typeof ABORTED) => void) | undefined;
  const onAbort = (): void => wake?.(ABORTED);
  signal?.addEventListener("abort", onAbort, { once: true });
  const stepOf = (next: Promise<IteratorResult<AgentEvent>>, abortable: AbortSignal) =>
    new Promise<IteratorResult<AgentEvent> | typeof ABORTED>((resolve, reject) => {
      if (abortable.aborted) return resolve(ABORTED);
      wake = resolve;
      next.then(resolve, reject);
    });
  try {
    for (;;) {
      const failure = renderFailed();
      if (failure) throw failure.error;
      const next = iterator.next();
      const step = signal ? await stepOf(next, signal) : await next;
      wake = undefined;
      if (step === ABORTED) {
        // The loop is being cancelled by the same signal; whatever it still yields or throws is moot.
        next.catch(() => undefined);
        iterator.return?.(undefined)?.catch(() => undefined);
        return { stopped: true };
      }
      if (step.done) return { stopped: false };
      onEvent(step.value);
    }
  } catch (error) {
    if (signal?.aborted) return { stopped: true };
    return { stopped: false, streamError: { error } };
  } finally {
    signal?.removeEventListener("abort", onAbort);
  }
}

/** Streams an answer into the chat; resolves when its final text is visible (see the module comment). */
export async function streamReply(opts: StreamReplyOptions): Promise<StreamReplyResult> {
  const { port, chatKey, journal, gate, signal } = opts;
  const now = opts.now ?? Date.now;
  // Rendering (and measuring) is the costly part; an editor sends at most once per interval anyway.
  const renderDelayMs =
    opts.renderDelayMs ?? Math.min(250, Math.max(40, Math.floor(port.limits.minEditIntervalMs / 4)));
  // Read on every request: a port learns its pacing from the platform's answers (Discord's rate-limit headers).
  const spacing: RequestSpacing = {
    get minIntervalMs() {
      return port.limits.minEditIntervalMs;
    },
  };
  let firstVisible = false;
  const markVisible = () => {
    if (firstVisible) return;
    firstVisible = true;
    opts.onFirstVisible?.();
  };
  let ending = false;
  /** Events changed the view since it was last rendered. */
  let viewStale = false;
  let renderFailure: { error: unknown } | undefined;
  /** Pull mode: the editor holding a slot asks for the view now; it is rendered only if something changed. */
  const produce = () => {
    if (!viewStale) return;
    viewStale = false;
    try {
      renderer.render(false);
    } catch (error) {
      renderFailure ??= { error }; // surfaced by the event loop
    }
  };
  const editor = { chatKey, gate, now, produce, ...(signal ? { signal } : {}) };
  const chain = createMessageChain({ port, journal, editor: { ...editor, spacing }, onVisible: markVisible });
  const draft = port.draft?.bind(port);
  const surface: LiveSurface = draft
    ? createDraftSurface({
        draft,
        draftId: opts.draftId ?? 1 + Math.floor(Math.random() * 2_147_483_646),
        limits: () => port.limits,
        editor,
        keepAliveMs: opts.draftKeepAliveMs ?? 20_000,
        onVisible: markVisible,
      })
    : createMessageSurface(chain, { onVisible: markVisible, ending: () => ending });
  const renderer = createReplyRenderer(opts, chain, () => surface);

  let renderTimer: ReturnType<typeof setTimeout> | undefined;
  /** The view changed: the live editor pulls it when it has a slot (a held-back continuation is rendered on a timer). */
  const invalidate = () => {
    viewStale = true;
    if (surface.invalidate(renderer.current()) || renderTimer !== undefined) return;
    renderTimer = setTimeout(() => {
      renderTimer = undefined;
      produce();
    }, renderDelayMs);
  };

  // --- something visible at once -------------------------------------------------------------
  if (opts.typing !== false)
    port
      .typing?.(signal ? { signal } : {})
      .catch((error: unknown) => opts.logger?.warn({ err: error }, "typing indicator failed"));
  surface.begin(port.format(PLACEHOLDER));

  // --- the events ------------------------------------------------------------------------------
  let finish: FinishEvent | undefined;
  const consumed = await consumeEvents(
    opts.events,
    signal,
    (event) => {
      const before = renderer.state;
      renderer.state = applyAgentEvent(before, event);
      if (event.type === "finish") finish = event;
      if (changesView(before, renderer.state, event, opts.showReasoning)) invalidate();
    },
    () => renderFailure,
  );
  if (renderTimer !== undefined) clearTimeout(renderTimer);
  const stopped = consumed.stopped || finish?.reason === "aborted";
  const { streamError } = consumed;

  // --- the final text --------------------------------------------------------------------------
  if (stopped) renderer.state = stopReplyView(renderer.state);
  if (streamError) {
    const line = opts.failureLine?.(streamError.error);
    if (line) renderer.state = withFailureLine(renderer.state, line);
  }
  ending = true;
  viewStale = false; // from here on only the final render below shows the view (no late intermediate pull)
  await surface.end();
  let renderError: { error: unknown } | undefined;
  try {
    renderer.render(true);
    renderer.supersedeLeftovers();
  } catch (error) {
    renderError = { error };
  }
  const { failed } = await chain.settle();
  if (streamError) {
    if (failed !== undefined || renderError) {
      opts.logger?.warn(
        { err: failed ?? renderError?.error },
        "could not flush the reply after the event stream failed",
      );
    }
    throw streamError.error;
  }
  if (renderError) throw renderError.error;
  if (failed !== undefined) throw failed;
  return {
    messageIds: chain.ids(),
    text: renderReplyView(renderer.state, { showReasoning: opts.showReasoning }),
    ...(finish ? { finish } : {}),
    stopped,
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
export async function showFailure(
  port: ReplyPort,
  journal: ReplyJournal,
  line: string,
  opts: ShowFailureOptions = {},
): Promise<void> {
  let content = port.format(opts.previousMarkdown?.trim() ? joinSegments([opts.previousMarkdown, line]) : line);
  if (renderedLength(port, content) > port.limits.maxLength) content = port.format(line);
  // The same chain as a streamed reply: the last message of the journal is edited, or a first one is sent and recorded.
  const chain = createMessageChain({
    port,
    journal,
    editor: { chatKey: opts.chatKey ?? "failure", gate: opts.gate ?? createLocalRateGate({ minIntervalMs: 0 }) },
  });
  chain.finalise(Math.max(0, chain.existing.length - 1), content, opts.signal);
  const { failed } = await chain.settle();
  if (failed !== undefined) throw failed;
}
