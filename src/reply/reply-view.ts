/**
 * What the user sees of an answer, as Markdown, folded from the agent's events:
 * tool activity while tools run (`🔧 get_weather(北京)…` → `✅ get_weather(北京)`),
 * reasoning per SHOW_REASONING, the answer, and a closing note when the answer
 * was cut, stopped or ran out of tool rounds. Pure functions: the engine keeps
 * the state and re-renders it.
 *
 * The view is a list of segments, one per block in event order plus a trailing
 * notes segment. Blocks are only ever appended, and an answer block's text only
 * grows, so the engine can remember "everything up to segment s, offset o is
 * already in earlier messages" across re-renders.
 */
import { assertNever, type AgentEvent, type FinishReason } from "../contracts/agent-events.js";
import { closingFor, fenceAfter } from "../shared/code-fence.js";

/** SHOW_REASONING: hidden, one "thinking" line while it lasts, or shown as a quote above the answer. */
export type ShowReasoning = "off" | "collapsed" | "full";

/** One tool call as the user sees it. */
export interface ToolActivity {
  id: string;
  name: string;
  /** The raw argument text the model wrote. */
  args: string;
  status: "running" | "ok" | "error";
  /** The error observation, for `status: "error"`. */
  error?: string;
}

/** A block of the view, in the order the events produced it. */
export type ViewBlock =
  | { kind: "reasoning"; round: number; text: string }
  | { kind: "tools"; round: number; calls: readonly ToolActivity[] }
  | { kind: "text"; round: number; text: string };

/** Everything the view needs to render; build it with `emptyReplyView` and `applyAgentEvent`. */
export interface ReplyViewState {
  readonly blocks: readonly ViewBlock[];
  /** Set once the answer has ended (from the `finish` event, or `stopReplyView`). */
  readonly ending?: FinishReason;
  /** The `finish` event's text (the visible answer, or the fuse's message for `max-rounds`). */
  readonly finishText?: string;
  /** A failure line put under the answer (`withFailureLine`). */
  readonly failure?: string;
}

/** How the view is rendered (SHOW_REASONING). */
export interface RenderViewOptions {
  showReasoning: ShowReasoning;
}

/** Shown while nothing else is visible yet. */
export const PLACEHOLDER = "…";
const THINKING_LINE = "💭 thinking…";
const MAX_ARGS_CHARS = 40;
const MAX_ERROR_CHARS = 80;

/** The state before any event. */
export function emptyReplyView(): ReplyViewState {
  return { blocks: [] };
}

/** Folds one agent event into the view. */
export function applyAgentEvent(state: ReplyViewState, event: AgentEvent): ReplyViewState {
  const blocks = state.blocks;
  const last = blocks[blocks.length - 1];
  switch (event.type) {
    case "reasoning-delta":
      if (event.text === "") return state;
      if (last?.kind === "reasoning" && last.round === event.round) {
        return { ...state, blocks: [...blocks.slice(0, -1), { ...last, text: last.text + event.text }] };
      }
      return { ...state, blocks: [...blocks, { kind: "reasoning", round: event.round, text: event.text }] };
    case "text-delta":
      if (event.text === "") return state;
      if (last?.kind === "text" && last.round === event.round) {
        return { ...state, blocks: [...blocks.slice(0, -1), { ...last, text: last.text + event.text }] };
      }
      return { ...state, blocks: [...blocks, { kind: "text", round: event.round, text: event.text }] };
    case "tool-call": {
      const call: ToolActivity = { id: event.id, name: event.name, args: event.arguments, status: "running" };
      if (last?.kind === "tools" && last.round === event.round) {
        return { ...state, blocks: [...blocks.slice(0, -1), { ...last, calls: [...last.calls, call] }] };
      }
      return { ...state, blocks: [...blocks, { kind: "tools", round: event.round, calls: [call] }] };
    }
    case "tool-result": {
      const index = blocks.findIndex((b) => b.kind === "tools" && b.calls.some((c) => c.id === event.id));
      const block = blocks[index];
      if (block?.kind !== "tools") return state;
      const calls = block.calls.map(
        (c): ToolActivity =>
          c.id === event.id
            ? { ...c, status: event.ok ? "ok" : "error", ...(event.ok ? {} : { error: event.output }) }
            : c,
      );
      return { ...state, blocks: blocks.map((b, i) => (i === index ? { ...block, calls } : b)) };
    }
    case "round-finish":
      return state;
    case "finish":
      return { ...state, ending: event.reason, finishText: event.text };
    default:
      return assertNever(event);
  }
}

/** Marks the answer as stopped (abort): tools still running stay as they are, a "stopped" note follows. */
export function stopReplyView(state: ReplyViewState): ReplyViewState {
  return state.ending ? state : { ...state, ending: "aborted" };
}

/** Puts a failure line (e.g. `modelUnavailableLine()`) under what is visible. */
export function withFailureLine(state: ReplyViewState, line: string): ReplyViewState {
  return { ...state, failure: line };
}

/** The line shown when the model server stayed unavailable through every retry. */
export function modelUnavailableLine(): string {
  return "⚠️ The model is unavailable right now — please try again in a moment.";
}

/** The segments of the view (see the module comment); empty strings are segments with nothing to show. */
export function renderReplyViewSegments(state: ReplyViewState, opts: RenderViewOptions): string[] {
  const lastIndex = state.blocks.length - 1;
  const segments = state.blocks.map((block, i) => renderBlock(block, i === lastIndex && !state.ending, opts));
  const answered = state.blocks.some((b) => b.kind === "text" && b.text.trim() !== "");
  const finishText = state.finishText?.trim() ?? "";

  // An answer that only came with `finish` (nothing streamed) is still shown.
  const late =
    !answered && finishText !== "" && (state.ending === "stop" || state.ending === "length") ? finishText : "";
  segments.push(late);

  const notes: string[] = [];
  switch (state.ending) {
    case undefined:
    case "stop":
      if (state.ending === "stop" && !answered && late === "" && !state.failure) notes.push("_(no answer)_");
      break;
    case "length":
      notes.push("✂️ _The answer was cut off: it reached the length limit._");
      break;
    case "max-rounds": {
      const visible = segments.join("\n");
      if (finishText === "") notes.push("⚠️ _Stopped: too many tool rounds._");
      else if (!visible.includes(finishText)) notes.push(`⚠️ ${finishText}`);
      break;
    }
    case "aborted":
      notes.push("⏹ _stopped_");
      break;
    default:
      assertNever(state.ending);
  }
  if (state.failure) notes.push(state.failure);
  segments.push(notes.join("\n"));
  return segments;
}

/** The whole view as one Markdown text ("" while there is nothing to show). */
export function renderReplyView(state: ReplyViewState, opts: RenderViewOptions): string {
  return joinSegments(renderReplyViewSegments(state, opts));
}

/**
 * Joins segments with blank lines. A segment that leaves a code fence open (an
 * answer cut mid-code) gets it closed first, so the note after it is not code.
 */
export function joinSegments(segments: readonly string[]): string {
  let out = "";
  for (const segment of segments) {
    if (segment === "") continue;
    if (out !== "") {
      const open = fenceAfter(out);
      out += (open ? `${closingFor(out, open)}\n\n` : "\n\n") + segment;
    } else {
      out = segment;
    }
  }
  return out;
}

function renderBlock(block: ViewBlock, live: boolean, opts: RenderViewOptions): string {
  switch (block.kind) {
    case "reasoning":
      if (opts.showReasoning === "off") return "";
      if (opts.showReasoning === "collapsed") return live ? THINKING_LINE : "";
      return quote(block.text);
    case "tools":
      return block.calls.map(toolLine).join("\n");
    case "text":
      // Leading blank lines (after thinking) and trailing spaces are noise; the text stays prefix-stable.
      return block.text.replace(/^(?:[ \t]*\n)+/, "").trimEnd();
    default:
      return assertNever(block);
  }
}

function quote(text: string): string {
  const trimmed = text.trim();
  if (trimmed === "") return "";
  return trimmed
    .split("\n")
    .map((line, i) => (i === 0 ? `> 💭 ${line}` : `> ${line}`))
    .join("\n");
}

/** `🔧 name(args)…` while running, then `✅ name(args)` or `⚠️ name(args): error`. */
export function toolLine(call: ToolActivity): string {
  const label = `${escapeMarkdown(call.name)}(${escapeMarkdown(truncate(describeArgs(call.args), MAX_ARGS_CHARS))})`;
  switch (call.status) {
    case "running":
      return `🔧 ${label}…`;
    case "ok":
      return `✅ ${label}`;
    case "error":
      return `⚠️ ${label}: ${escapeMarkdown(truncate(shortError(call.error ?? ""), MAX_ERROR_CHARS))}`;
    default:
      return assertNever(call.status);
  }
}

/** `{"city":"北京"}` → `北京`: argument values only, because that is what a user recognises. */
function describeArgs(raw: string): string {
  let shown: string;
  try {
    const value: unknown = JSON.parse(raw);
    if (value !== null && typeof value === "object" && !Array.isArray(value)) {
      shown = Object.values(value)
        .map((v) => (typeof v === "string" ? v : JSON.stringify(v)))
        .join(", ");
    } else {
      shown = typeof value === "string" ? value : JSON.stringify(value);
    }
  } catch {
    shown = raw; // the model wrote arguments that are not JSON: show them as written
  }
  return shown.replace(/\s+/g, " ").trim();
}

function shortError(output: string): string {
  let text = output;
  try {
    const value: unknown = JSON.parse(output);
    if (typeof value === "string") text = value;
    else if (value !== null && typeof value === "object") {
      const record = value as Record<string, unknown>;
      const message = record.error ?? record.message;
      if (typeof message === "string") text = message;
      else if (
        message !== null &&
        typeof message === "object" &&
        typeof (message as Record<string, unknown>).message === "string"
      ) {
        text = (message as Record<string, unknown>).message as string;
      }
    }
  } catch {
    // not JSON: the observation is already prose
  }
  const line = (text.trim().split("\n")[0] ?? "").trim();
  // The line already names the tool: "Error: read_url failed: refused: …" reads as "refused: …".
  return line.replace(/^Error:\s*/, "").replace(/^[\w.-]+ failed:\s*/, "") || "failed";
}

function truncate(text: string, max: number): string {
  const chars = [...text];
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join("")}…`;
}

/** Backslash-escapes inline Markdown so tool arguments cannot restyle the message. */
export function escapeMarkdown(text: string): string {
  return text.replace(/[\\`*_~|[\]<>]/g, "\\$&");
}
