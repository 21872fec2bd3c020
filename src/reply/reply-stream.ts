/**
 * The streaming reply engine: agent events in, messages in a chat out.
 *
 * - Something is visible at once: the typing indicator and a placeholder message (recorded in the
 *   journal before anything else), or the first draft when the port streams drafts natively.
 * - Events only update the view's state and mark it stale; the reply's pump (reply-pump.ts) renders
 *   it when it holds a slot, right before its request, so the text sent is the freshest and the view
 *   is rendered once per request. Sealed messages are never rendered again (view-layout.ts).
 * - Over the platform's limit, the message gets its final text at a good boundary and a continuation
 *   takes over. With drafts (Telegram private chats) the live tail is a draft, kept alive while idle,
 *   and the message(s) are sent when the answer ends.
 * - A retried job's journal holds message ids: those messages are edited, new ones sent beyond them.
 * - An abort lands what is there with a "stopped" note; a failing event stream lands what is there
 *   (plus an optional failure line) and rethrows.
 */
import type { AgentEvent } from "../contracts/agent-events.js";
import type { RenderedText, ReplyPort } from "../contracts/reply-port.js";
import type { ReplyJournal } from "../contracts/reply-journal.js";
import { createLocalRateGate, type RateGate } from "./rate-gate.js";
import { renderedLength, visibleText } from "./rendered-length.js";
import { createReplyPump, type ReplyPlan, type Wanted } from "./reply-pump.js";
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
import { layoutView, UNSEALED } from "./view-layout.js";

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
   * final attempt), or undefined to land what is there unchanged because a retry will continue it.
   */
  failureLine?(error: unknown): string | undefined;
  now?(): number;
  /** Show the typing indicator at the start (default true; false when the adapter showed it moments ago). */
  typing?: boolean;
  /** The draft id for `port.draft` (default: random, non-zero). */
  draftId?: number;
  /** A draft is re-sent after this long without a change, before the platform drops it (default 20 s; Telegram keeps 30 s). */
  draftKeepAliveMs?: number;
  logger?: { warn(obj: object, msg?: string): void };
  /** Applied to each rendered segment before the split (secret scrubbing: a split may cut a secret in two). */
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

/** The reply's view as messages: sealed pieces (final, kept), the live tail, or the placeholder. */
function createRenderer(opts: StreamReplyOptions, drafts: boolean, existing: number) {
  const { port } = opts;
  // The splitter measures the live tail, which is then formatted once more: remember the last one.
  let last: { markdown: string; rendered: RenderedText; visible?: string } | undefined;
  const formatted = (markdown: string) => {
    if (last?.markdown !== markdown) last = { markdown, rendered: port.format(markdown) };
    return last;
  };
  const visibleOf = (markdown: string) => {
    const known = formatted(markdown);
    return (known.visible ??= visibleText(port, known.rendered));
  };
  let seal = UNSEALED;
  const sealed: Wanted[] = [];
  return {
    state: emptyReplyView(),
    render(final: boolean): ReplyPlan {
      const rendered = renderReplyViewSegments(this.state, { showReasoning: opts.showReasoning });
      const segments = opts.transform ? rendered.map((segment) => opts.transform!(segment)) : rendered;
      const measure = (markdown: string) => visibleOf(markdown).length;
      const layout = layoutView(segments, seal, { limit: port.limits.maxLength, measure });
      for (const piece of layout.sealed) {
        const blank = visibleOf(piece.markdown).trim() === ""; // a platform refuses an empty message
        sealed.push({
          content: blank ? port.format(SUPERSEDED_TEXT) : formatted(piece.markdown).rendered,
          final: true,
        });
        seal = piece.seal;
      }
      const messages = [...sealed];
      const live = layout.live !== undefined && visibleOf(layout.live).trim() !== "" ? layout.live : undefined;
      if (live !== undefined && (final || !drafts)) messages.push({ content: formatted(live).rendered, final });
      if (live !== undefined && !final && drafts) return { messages, draft: formatted(live).rendered };
      if (live !== undefined || sealed.length > 0) return { messages };
      const placeholder = port.format(PLACEHOLDER);
      if (!final && drafts) return { messages, draft: placeholder };
      // A retried job's message is already there; a reply of drafts that ends with nothing sends none.
      if (final ? !drafts || existing > 0 : existing === 0) messages.push({ content: placeholder, final });
      return { messages };
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
  const { port, signal } = opts;
  let firstVisible = false;
  const onVisible = () => {
    if (firstVisible) return;
    firstVisible = true;
    opts.onFirstVisible?.();
  };
  const drafts = port.draft !== undefined;
  const existing = opts.journal.messageIds.length;
  const renderer = createRenderer(opts, drafts, existing);
  const pump = createReplyPump({
    port,
    journal: opts.journal,
    chatKey: opts.chatKey,
    gate: opts.gate,
    render: (final) => renderer.render(final),
    leftover: port.format(SUPERSEDED_TEXT),
    ...(signal ? { signal } : {}),
    ...(drafts ? { draftId: opts.draftId ?? 1 + Math.floor(Math.random() * 2_147_483_646) } : {}),
    keepAliveMs: opts.draftKeepAliveMs ?? 20_000,
    onVisible,
    ...(opts.now ? { now: opts.now } : {}),
  });

  if (opts.typing !== false)
    port
      .typing?.(signal ? { signal } : {})
      .catch((error: unknown) => opts.logger?.warn({ err: error }, "typing indicator failed"));
  if (existing > 0 && !drafts) onVisible(); // a retried job: its message is already there
  pump.invalidate(); // the placeholder (or the first draft)

  let finish: FinishEvent | undefined;
  const consumed = await consumeEvents(
    opts.events,
    signal,
    (event) => {
      const before = renderer.state;
      renderer.state = applyAgentEvent(before, event);
      if (event.type === "finish") finish = event;
      if (changesView(before, renderer.state, event, opts.showReasoning)) pump.invalidate();
    },
    () => pump.renderError,
  );
  const stopped = consumed.stopped || finish?.reason === "aborted";
  const { streamError } = consumed;
  if (stopped) renderer.state = stopReplyView(renderer.state);
  const line = streamError && opts.failureLine?.(streamError.error);
  if (line) renderer.state = withFailureLine(renderer.state, line);
  try {
    await pump.finish();
  } catch (error) {
    if (!streamError) throw error;
    opts.logger?.warn({ err: error }, "could not land the reply after the event stream failed");
  }
  if (streamError) throw streamError.error;
  return {
    messageIds: pump.ids(),
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
  // The same pump as a streamed reply: the journal's last message is edited, or a first one is sent and recorded.
  const messages: ReplyPlan["messages"] = journal.messageIds.map(() => undefined);
  messages[Math.max(0, messages.length - 1)] = { content, final: true };
  const pump = createReplyPump({
    port,
    journal,
    chatKey: opts.chatKey ?? "failure",
    gate: opts.gate ?? createLocalRateGate({ minIntervalMs: 0 }),
    render: () => ({ messages }),
    leftover: content,
    ...(opts.signal ? { finalSignal: opts.signal } : {}),
  });
  await pump.finish();
}
