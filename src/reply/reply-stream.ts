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
  /** When the event stream throws: a line under the reply (the final attempt), or undefined (a retry continues it). */
  failureLine?(error: unknown): string | undefined;
  now?(): number;
  /** Show the typing indicator at the start (default true; false when the adapter showed it moments ago). */
  typing?: boolean;
  /** The draft id for `port.draft` (default random), and how long an unchanged draft lives (default 20 s; Telegram keeps 30 s). */
  draftId?: number;
  draftKeepAliveMs?: number;
  logger?: { warn(obj: object, msg?: string): void };
  /** Applied to each rendered segment before the split (secret scrubbing: a split may cut a secret in two). */
  transform?(markdown: string): string;
}

/** How a reply ended: its message ids (as in the journal), its Markdown, the agent's finish event, and whether it was stopped. */
export interface StreamReplyResult {
  messageIds: string[];
  text: string;
  finish?: FinishEvent;
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
        const content = blank ? port.format(SUPERSEDED_TEXT) : formatted(piece.markdown).rendered;
        sealed.push({ content, final: true });
        seal = piece.seal;
      }
      const messages = [...sealed];
      const live = layout.live !== undefined && visibleOf(layout.live).trim() !== "" ? layout.live : undefined;
      const tail =
        live !== undefined ? formatted(live).rendered : sealed.length === 0 ? port.format(PLACEHOLDER) : undefined;
      if (tail && drafts && !final) return { messages, draft: tail };
      // A retried job's message is already there; a reply of drafts that ends with nothing sends none.
      if (tail && (live !== undefined || (final ? !drafts || existing > 0 : existing === 0)))
        messages.push({ content: tail, final });
      return { messages };
    },
  };
}

/** Reads the agent's events into `onEvent` until they end, fail, or the signal aborts. */
async function consumeEvents(
  events: AsyncIterable<AgentEvent>,
  signal: AbortSignal | undefined,
  onEvent: (event: AgentEvent) => void,
  renderFailed: () => { error: unknown } | undefined,
): Promise<{ stopped: boolean; streamError?: { error: unknown } }> {
  const iterator = events[Symbol.asyncIterator]();
  // Each step waits on a promise of its own, settled by the next event or the abort (one promise of the
  // abort raced by every step would keep a reaction per event until the reply ends).
  let wake: ((step: typeof ABORTED) => void) | undefined;
  const onAbort = () => wake?.(ABORTED);
  signal?.addEventListener("abort", onAbort, { once: true });
  try {
    for (;;) {
      const failure = renderFailed();
      if (failure) throw failure.error;
      const next = iterator.next();
      const step = await new Promise<IteratorResult<AgentEvent> | typeof ABORTED>((resolve, reject) => {
        if (signal?.aborted) return resolve(ABORTED);
        wake = resolve;
        next.then(resolve, reject);
      });
      if (step === ABORTED) {
        next.catch(() => undefined); // the stream is cancelled by the same signal: what it still does is moot
        iterator.return?.(undefined)?.catch(() => undefined);
        return { stopped: true };
      }
      if (step.done) return { stopped: false };
      onEvent(step.value);
    }
  } catch (error) {
    return signal?.aborted ? { stopped: true } : { stopped: false, streamError: { error } };
  } finally {
    signal?.removeEventListener("abort", onAbort);
  }
}

/** Streams an answer into the chat; resolves when its final text is visible (see the module comment). */
export async function streamReply(opts: StreamReplyOptions): Promise<StreamReplyResult> {
  const { port, signal } = opts;
  const drafts = port.draft !== undefined;
  const renderer = createRenderer(opts, drafts, opts.journal.messageIds.length);
  const render = (final: boolean) => renderer.render(final);
  const pump = createReplyPump({ ...opts, render, leftover: port.format(SUPERSEDED_TEXT) });
  if (opts.typing !== false)
    port
      .typing?.(signal ? { signal } : {})
      .catch((error: unknown) => opts.logger?.warn({ err: error }, "typing indicator failed"));
  pump.invalidate(); // the placeholder (or the first draft)

  let finish: FinishEvent | undefined;
  const consumed = await consumeEvents(
    opts.events,
    signal,
    (event) => {
      const before = renderer.state;
      renderer.state = applyAgentEvent(before, event);
      if (event.type === "finish") finish = event;
      // A collapsed or hidden reasoning delta changes nothing visible.
      const hidden = event.type === "reasoning-delta" && opts.showReasoning !== "full";
      if (renderer.state !== before && (!hidden || renderer.state.blocks.length !== before.blocks.length))
        pump.invalidate();
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

/** Options of `showFailure`: `previousMarkdown` is what the last message shows now (the line goes under it). */
export interface ShowFailureOptions {
  previousMarkdown?: string;
  gate?: RateGate;
  chatKey?: string;
  signal?: AbortSignal;
}

/** Puts a failure line into a reply's last message, or sends it when the journal has none (the worker's give-up path). */
export async function showFailure(port: ReplyPort, journal: ReplyJournal, line: string, opts: ShowFailureOptions = {}) {
  let content = port.format(opts.previousMarkdown?.trim() ? joinSegments([opts.previousMarkdown, line]) : line);
  if (renderedLength(port, content) > port.limits.maxLength) content = port.format(line);
  // The same pump as a streamed reply: the journal's last message is edited, or a first one is sent and recorded.
  const messages: ReplyPlan["messages"] = journal.messageIds.map(() => undefined);
  messages[Math.max(0, messages.length - 1)] = { content, final: true };
  await createReplyPump({
    port,
    journal,
    chatKey: opts.chatKey ?? "failure",
    gate: opts.gate ?? createLocalRateGate({ minIntervalMs: 0 }),
    render: () => ({ messages }),
    leftover: content,
    ...(opts.signal ? { finalSignal: opts.signal } : {}),
  }).finish();
}
