/**
 * The streaming reply engine: agent events in, messages in a chat out. The typing indicator and a
 * placeholder (or first draft) show at once; events only update the view's state and mark it stale;
 * the reply's pump (reply-pump.ts) renders it when it holds a slot and sends what differs. Over the
 * platform's limit a message gets its final text at a good boundary and a continuation takes over
 * (view-layout.ts); sealed messages are never rendered again. With drafts (Telegram private chats)
 * the live tail is a draft and the message(s) are sent at the end. A retried job's messages (journal)
 * are edited, new ones sent beyond them. /stop lands what is there with a "stopped" note; a failing
 * event stream lands what is there (plus an optional failure line) and rethrows.
 */
import type { AgentEvent } from "../contracts/agent-events.js";
import type { RenderedText, ReplyPort } from "../contracts/reply-port.js";
import type { ReplyJournal } from "../contracts/reply-journal.js";
import { createLocalRateGate, type RateGate } from "./rate-gate.js";
import { visibleText } from "./rendered-length.js";
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

/** What replaces the text of a message left over from an earlier attempt that the new answer does not need. */
export const SUPERSEDED_TEXT = "⋯";

const ABORTED = Symbol("aborted");

/** The reply's view as messages: sealed pieces (final, kept), the live tail, or the placeholder. */
function createRenderer(opts: StreamReplyOptions, drafts: boolean, existing: number) {
  const { port } = opts;
  // The splitter measures the live tail, which is then formatted once more: remember the last one.
  let last: { markdown: string; rendered: RenderedText; visible: string } | undefined;
  const formatted = (markdown: string) => {
    if (last?.markdown === markdown) return last;
    const rendered = port.format(markdown);
    return (last = { markdown, rendered, visible: visibleText(port, rendered) });
  };
  const visibleOf = (markdown: string) => formatted(markdown).visible;
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

/**
 * Streams an answer into the chat; resolves once its final text is visible, with its message ids (as in
 * the journal), its Markdown, the agent's finish event, and whether it was stopped.
 */
export async function streamReply(opts: StreamReplyOptions) {
  const { port, signal } = opts;
  const drafts = port.draft !== undefined;
  const renderer = createRenderer(opts, drafts, opts.journal.messageIds.length);
  const render = (final: boolean) => renderer.render(final);
  const pump = createReplyPump({ ...opts, render, leftover: port.format(SUPERSEDED_TEXT) });
  if (opts.typing !== false)
    port
      .typing?.(signal ? { signal } : {})
      .catch((error: unknown) => opts.logger?.warn({ err: error }, "typing indicator failed"));
  if (drafts || opts.journal.messageIds.length === 0) pump.invalidate(); // the placeholder, or the first draft

  let finish: Extract<AgentEvent, { type: "finish" }> | undefined; // why it ended, what goes into the history
  let streamError: { error: unknown } | undefined;
  let stopped = false;
  const iterator = opts.events[Symbol.asyncIterator]();
  // Each step waits on a promise of its own, settled by the next event or the abort (one promise of the
  // abort raced by every step would keep a reaction per event until the reply ends).
  let wake: ((step: typeof ABORTED) => void) | undefined;
  const onAbort = () => wake?.(ABORTED);
  signal?.addEventListener("abort", onAbort, { once: true });
  try {
    for (;;) {
      const failed = pump.renderError();
      if (failed) throw failed.error;
      const next = iterator.next();
      const step = await new Promise<IteratorResult<AgentEvent> | typeof ABORTED>((resolve, reject) => {
        if (signal?.aborted) return resolve(ABORTED);
        wake = resolve;
        next.then(resolve, reject);
      });
      if (step === ABORTED) {
        next.catch(() => undefined); // the stream is cancelled by the same signal: what it still does is moot
        iterator.return?.(undefined)?.catch(() => undefined);
        stopped = true;
        break;
      }
      if (step.done) break;
      const before = renderer.state;
      renderer.state = applyAgentEvent(before, step.value);
      if (step.value.type === "finish") finish = step.value;
      // A collapsed or hidden reasoning delta changes nothing visible.
      const hidden = step.value.type === "reasoning-delta" && opts.showReasoning !== "full";
      if (renderer.state !== before && (!hidden || renderer.state.blocks.length !== before.blocks.length))
        pump.invalidate();
    }
  } catch (error) {
    if (signal?.aborted) stopped = true;
    else streamError = { error };
  } finally {
    signal?.removeEventListener("abort", onAbort);
  }
  stopped ||= finish?.reason === "aborted";
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

/**
 * Puts a failure line into a reply's last message (under `previousMarkdown`, what it shows now), or sends
 * it when the journal has none: the worker's give-up path.
 */
export async function showFailure(
  port: ReplyPort,
  journal: ReplyJournal,
  line: string,
  opts: { previousMarkdown?: string; gate?: RateGate; chatKey?: string; signal?: AbortSignal } = {},
) {
  let content = port.format(opts.previousMarkdown?.trim() ? joinSegments([opts.previousMarkdown, line]) : line);
  if (visibleText(port, content).length > port.limits.maxLength) content = port.format(line);
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
