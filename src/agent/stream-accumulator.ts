/**
 * Folds one round's `chat.completion.chunk`s into deltas as they arrive, then the round's tool calls, text and finish
 * reason. Pure, so every server quirk (each seen in a real server) is testable without a socket:
 * - tool_call fragments keyed by `index`, `id`/`name` only in the first, arguments in pieces, parallel calls
 *   interleaved; a call without an id gets one (some Ollama/vLLM builds);
 * - reasoning as `reasoning_content` (llama.cpp, DashScope, older vLLM), `reasoning` (vLLM ≥ 0.10, Ollama, LM Studio)
 *   or `<think>` tags in content; `<tool_call>{…}</tool_call>` written as content by small models;
 * - `finish_reason` `stop` on a tool round, or none, or a usage-only chunk with no `choices` after the finish.
 */
import { randomBytes } from "node:crypto";
import type { ChatCompletionChunk } from "openai/resources/chat/completions";
import type { ToolCallRecord } from "../contracts/chat-message.js";
import { createContentTagParser, type ContentPiece, type ContentTagParser } from "./content-tag-parser.js";
import type { RoundFinishReason, Usage } from "../contracts/agent-events.js";
import { parseToolCallBlock } from "./textual-tool-call.js";

/** A delta to show now. */
export interface StreamDelta {
  type: "reasoning" | "text";
  text: string;
}

/** Everything one round produced. */
export interface RoundOutcome {
  /** The visible answer of this round, trimmed; never reasoning, never tool-call markup. */
  text: string;
  /** All reasoning of this round (not stored in history). */
  reasoning: string;
  /** Calls to run: empty when the round was cut by `length`. Arguments are the raw text, unparsed. */
  toolCalls: ToolCallRecord[];
  /** Normalised: `tool_calls` whenever calls are present and the round was not cut. */
  finishReason: RoundFinishReason;
  /** Exactly what the server said (null when it said nothing). */
  serverFinishReason: string | null;
  usage: Usage | undefined;
  /** Calls the model started but that cannot be run (cut by `length`, or no name). */
  droppedToolCalls: number;
}

/** The accumulator: push every chunk, then `end()` once the stream is over. */
export interface StreamAccumulator {
  push(chunk: ChatCompletionChunk): StreamDelta[];
  end(): { deltas: StreamDelta[]; outcome: RoundOutcome };
}

/** Options for one round. */
export interface StreamAccumulatorOptions {
  /** The template pre-opens `<think>` and the server passes the raw text on: content starts inside reasoning. */
  startInReasoning?: boolean;
  /** Id for a call the server sent without one. */
  makeId?: () => string;
}

interface PartialCall {
  index: number;
  id: string;
  type: string;
  name: string;
  arguments: string;
}

/** Delta fields some servers add beyond the OpenAI schema. */
interface ExtendedDelta {
  reasoning_content?: unknown;
  reasoning?: unknown;
}

/** Makes an OpenAI-style call id (`call_` + 24 alphanumerics). */
export function generateToolCallId(): string {
  return `call_${randomBytes(18)
    .toString("base64")
    .replace(/[^A-Za-z0-9]/g, "")
    .slice(0, 24)
    .padEnd(24, "0")}`;
}

/** Creates an accumulator for one streamed round. */
export function createStreamAccumulator(opts: StreamAccumulatorOptions = {}): StreamAccumulator {
  const makeId = opts.makeId ?? generateToolCallId;
  const calls = new Map<number, PartialCall>();
  let lastIndex: number | undefined;
  let parser: ContentTagParser | undefined;
  let sawReasoningField = false;
  let reasoning = "";
  let serverFinishReason: string | null = null;
  let usage: Usage | undefined;

  function contentParser(): ContentTagParser {
    // If the server already split reasoning out, the content is the answer even for a pre-opened template.
    parser ??= createContentTagParser({ startInReasoning: Boolean(opts.startInReasoning) && !sawReasoningField });
    return parser;
  }

  function toDeltas(pieces: ContentPiece[]): StreamDelta[] {
    return pieces.map((p) => {
      if (p.kind === "reasoning") reasoning += p.text;
      return { type: p.kind, text: p.text };
    });
  }

  function addFragment(fragment: ChatCompletionChunk.Choice.Delta.ToolCall): void {
    const raw = fragment as Partial<ChatCompletionChunk.Choice.Delta.ToolCall>;
    let index = typeof raw.index === "number" ? raw.index : undefined;
    if (index === undefined) {
      // No index (some Ollama builds): a fragment with its own id or name starts a new call.
      const byId = raw.id ? [...calls.values()].find((c) => c.id === raw.id) : undefined;
      if (byId) index = byId.index;
      else if (raw.id || raw.function?.name || lastIndex === undefined)
        index = calls.size === 0 ? 0 : Math.max(...calls.keys()) + 1;
      else index = lastIndex;
    }
    lastIndex = index;
    let call = calls.get(index);
    if (!call) {
      call = { index, id: "", type: "", name: "", arguments: "" };
      calls.set(index, call);
    }
    // id, type and name usually come once; servers that repeat them must not double them.
    if (typeof raw.id === "string" && raw.id !== "" && call.id === "") call.id = raw.id;
    const type: unknown = raw.type;
    if (typeof type === "string" && type !== "" && call.type === "") call.type = type;
    const name = typeof raw.function?.name === "string" ? raw.function.name : undefined;
    if (name && name !== call.name) call.name = call.name === "" ? name : call.name + name;
    const args = raw.function?.arguments;
    if (typeof args === "string") call.arguments += args;
  }

  return {
    push(chunk) {
      // Proxies and servers also send keep-alives and vendor events that are valid JSON but no
      // chunk (null, 42, {"type":"ping"}, odd field types): they carry nothing, and must not throw.
      if (!isObject(chunk)) return [];
      if (isObject(chunk.usage)) {
        usage = { promptTokens: chunk.usage.prompt_tokens ?? 0, completionTokens: chunk.usage.completion_tokens ?? 0 };
        const cached: unknown = chunk.usage.prompt_tokens_details?.cached_tokens;
        if (typeof cached === "number") usage.cachedTokens = cached;
      }
      // llama.cpp's `timings` ride on the last chunk (the usage chunk when usage was asked for).
      const timings: unknown = (chunk as { timings?: unknown }).timings;
      if (isObject<Record<string, unknown>>(timings)) usage = withTimings(usage, timings);
      // n = 1: only the first choice matters; the usage chunk has none at all.
      const choice: unknown = Array.isArray(chunk.choices) ? chunk.choices[0] : undefined;
      if (!isObject<ChatCompletionChunk.Choice>(choice)) return [];
      const finish: unknown = choice.finish_reason;
      if (typeof finish === "string" && finish !== "") serverFinishReason = finish;
      const delta = (isObject(choice.delta) ? choice.delta : {}) as ChatCompletionChunk.Choice.Delta & ExtendedDelta;
      const out: StreamDelta[] = [];
      // vLLM/OpenRouter may send both keys with the same text: take one.
      const thought =
        typeof delta.reasoning_content === "string" && delta.reasoning_content !== ""
          ? delta.reasoning_content
          : typeof delta.reasoning === "string"
            ? delta.reasoning
            : "";
      if (thought !== "") {
        sawReasoningField = true;
        reasoning += thought;
        out.push({ type: "reasoning", text: thought });
      }
      if (typeof delta.content === "string" && delta.content !== "") {
        out.push(...toDeltas(contentParser().push(delta.content)));
      }
      const fragments: unknown[] = Array.isArray(delta.tool_calls) ? delta.tool_calls : [];
      for (const fragment of fragments)
        if (isObject<ChatCompletionChunk.Choice.Delta.ToolCall>(fragment)) addFragment(fragment);
      return out;
    },

    end() {
      const flushed = parser ? parser.end() : undefined;
      const deltas = flushed ? toDeltas(flushed.pieces) : [];
      const summary = flushed?.summary ?? { text: "", toolBlocks: [], unclosedToolBlock: undefined };
      const cut = serverFinishReason === "length";

      const structured = [...calls.values()].sort((a, b) => a.index - b.index);
      const textual = summary.toolBlocks.flatMap(parseToolCallBlock);
      if (summary.unclosedToolBlock !== undefined && !cut) {
        // The model stopped without writing </tool_call>: accept it only if it is whole JSON.
        const parsed = parseToolCallBlock(summary.unclosedToolBlock);
        if (parsed.every((c) => c.name !== "" && isJson(c.arguments))) textual.push(...parsed);
      }
      const named = structured.filter((c) => c.name !== "");
      let dropped = structured.length - named.length;
      let toolCalls: ToolCallRecord[] = [
        ...named.map((c) => ({ ...c, id: c.id || makeId() })),
        ...textual.map((c) => ({ ...c, id: makeId() })),
      ].map((c) => ({ id: c.id, type: "function" as const, function: { name: c.name, arguments: c.arguments } }));
      if (cut) {
        // Cut arguments are never whole: running them would act on half a request.
        dropped += toolCalls.length + (summary.unclosedToolBlock !== undefined ? 1 : 0);
        toolCalls = [];
      }
      return {
        deltas,
        outcome: {
          text: summary.text.trim(),
          reasoning,
          toolCalls,
          finishReason: normaliseFinish(serverFinishReason, toolCalls.length > 0),
          serverFinishReason,
          usage,
          droppedToolCalls: dropped,
        },
      };
    },
  };
}

const FINISH_REASONS = new Map<string | null, RoundFinishReason>([
  ["stop", "stop"],
  ["tool_calls", "tool_calls"],
  ["function_call", "tool_calls"],
  ["content_filter", "content_filter"],
]);

function normaliseFinish(server: string | null, hasCalls: boolean): RoundFinishReason {
  if (server === "length") return "length";
  return hasCalls ? "tool_calls" : (FINISH_REASONS.get(server) ?? "unknown");
}

function isObject<T extends object = Record<string, unknown>>(value: unknown): value is T {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** Usage completed from llama.cpp's `timings` (`cache_n` reused, `prompt_n` read, `predicted_n` written). */
function withTimings(usage: Usage | undefined, timings: Record<string, unknown>): Usage {
  const num = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);
  const cacheN = num(timings.cache_n);
  const promptN = num(timings.prompt_n);
  const out: Usage = usage
    ? { ...usage }
    : { promptTokens: (promptN ?? 0) + (cacheN ?? 0), completionTokens: num(timings.predicted_n) ?? 0 };
  if (cacheN !== undefined) out.cachedTokens = cacheN;
  const promptMs = num(timings.prompt_ms);
  if (promptMs !== undefined) out.promptMs = promptMs;
  return out;
}
