/**
 * The streaming ReAct loop: one streamed request per round, its tool calls run concurrently and answered by
 * `tool_call_id`, until the model answers, the answer is cut, the round fuse blows or the signal aborts.
 * Output: AgentEvents ending with exactly one `finish`; the loop knows nothing of Telegram or Discord.
 */
import type OpenAI from "openai";
import type {
  ChatCompletionCreateParamsStreaming,
  ChatCompletionMessageParam,
} from "openai/resources/chat/completions";
import { toOpenAiTool, type AgentTool } from "../tools/tool.js";
import type { ChatMessage, ToolCallRecord } from "../contracts/chat-message.js";
import type { ToolConversation } from "../contracts/tool-conversation.js";
import type { AgentEvent, FinishReason, Usage } from "../contracts/agent-events.js";
import { dialectFields, type ModelServer } from "./model-dialect.js";
import { ModelError } from "./model-error.js";
import { generateToolCallId, type StreamDelta } from "./stream-accumulator.js";
import { streamRound, type StreamRoundResult } from "./stream-round.js";
import { buildSystemPrompt } from "./system-prompt.js";
import { createToolRunner, type ToolOutcome } from "./tool-runner.js";
import { toUserRequestMessage } from "./user-content.js";

/** What the loop runs on; built once per process from Config. */
export interface AgentDeps {
  client: OpenAI;
  model: string;
  modelServer: ModelServer;
  enableThinking: boolean;
  /** The fuse: at most this many rounds of tool execution per answer. */
  maxToolRounds: number;
  maxTokens: number;
  temperature?: number;
  topP?: number;
  toolTimeoutMs: number;
  /** Built-in and JSON Schema (MCP) tools alike; the loop does not care where a tool comes from. */
  tools: readonly AgentTool[];
  /** Clock for the system prompt's date. */
  now?: () => Date;
  /** The conversation's persona, added to the built-in system prompt. */
  persona?: string;
  /** Zone the system prompt states the time in (server zone by default). */
  timeZone?: string;
  /** Longest silence between streamed chunks; the client's timeout by default. */
  idleTimeoutMs?: number;
  /** Calls run per round (default 8, the rest refused): a web page must not turn a message into dozens of fetches. */
  maxParallelCalls?: number;
}

/** One run: the conversation so far plus the new user message (no system message). */
export interface AgentInput {
  messages: ChatMessage[];
  signal?: AbortSignal;
  /** Asked once after a context-size refusal: the conversation cut harder (undefined: the error stands). */
  shrinkHistory?: (messages: ChatMessage[], refusal: { excessTokens?: number }) => Promise<ChatMessage[] | undefined>;
  /** The chat this answer is for, passed to the tools (schedules act on it). */
  conversation?: ToolConversation;
}

const DEFAULT_MAX_PARALLEL_CALLS = 8;

/** Runs the loop; throws ModelError (from `next()`) when the model server fails. */
export async function* runAgent(deps: AgentDeps, input: AgentInput): AsyncGenerator<AgentEvent, void, undefined> {
  const { signal } = input;
  const system = buildSystemPrompt({
    now: deps.now?.() ?? new Date(),
    timeZone: deps.timeZone,
    persona: deps.persona,
    webSearch: deps.tools.some((t) => t.name === "web_search"),
  });
  const runner = createToolRunner({
    tools: deps.tools,
    defaultTimeoutMs: deps.toolTimeoutMs,
    conversation: input.conversation,
  });
  const toolSpecs = deps.tools.map(toOpenAiTool);
  const idleTimeoutMs = deps.idleTimeoutMs ?? deps.client.timeout;
  const appended: ChatMessage[] = [];
  let usage: Usage | undefined;
  let toolRounds = 0;
  let lastText = "";
  let history = input.messages;
  let shrunk = false;

  const finish = (reason: FinishReason, text: string, rounds: number): AgentEvent => ({
    type: "finish",
    reason,
    text,
    messages: appended,
    ...(usage ? { usage } : {}),
    prefix: { system, tools: toolSpecs },
    rounds,
  });

  // Tools also stop when the consumer abandons the loop (return/throw), not only on the user's signal.
  const abandoned = new AbortController();
  const toolSignal = signal ? AbortSignal.any([signal, abandoned.signal]) : abandoned.signal;
  try {
    // Bounded by the fuse: every round either returns or runs tools, and tool rounds are capped.
    for (let round = 1; ; round++) {
      if (signal?.aborted) {
        yield finish("aborted", "", round - 1);
        return;
      }
      const body = (): ChatCompletionCreateParamsStreaming & Record<string, unknown> => ({
        model: deps.model,
        messages: [{ role: "system" as const, content: system }, ...history, ...appended].map(toRequestMessage),
        stream: true as const,
        stream_options: { include_usage: true },
        ...(toolSpecs.length ? { tools: toolSpecs, tool_choice: "auto" as const, parallel_tool_calls: true } : {}),
        ...dialectFields(deps.modelServer, {
          enableThinking: deps.enableThinking,
          maxTokens: deps.maxTokens,
          temperature: deps.temperature,
          topP: deps.topP,
        }),
      });

      const { stream, first } = await startRound(body);
      let next: IteratorResult<StreamDelta, StreamRoundResult> = first;
      try {
        while (!next.done) {
          const delta = next.value;
          yield delta.type === "text"
            ? { type: "text-delta", round, text: delta.text }
            : { type: "reasoning-delta", round, text: delta.text };
          next = await stream.next();
        }
      } finally {
        // A consumer that stops listening (break, return) must not leave the request running.
        await stream.return(undefined as never);
      }
      const outcome = next.value;
      if (outcome.usage) usage = addUsage(usage, outcome.usage);

      if (outcome.aborted) {
        // Keep what the user already saw; a half round of tool calls without results is not valid history.
        if (outcome.text) appended.push({ role: "assistant", content: outcome.text });
        yield finish("aborted", outcome.text, round);
        return;
      }
      yield {
        type: "round-finish",
        round,
        reason: outcome.finishReason,
        ...(outcome.usage ? { usage: outcome.usage } : {}),
      };
      if (outcome.text) lastText = outcome.text;

      if (outcome.finishReason === "length") {
        appended.push({ role: "assistant", content: outcome.text });
        yield finish("length", outcome.text, round);
        return;
      }
      if (outcome.toolCalls.length === 0) {
        // A model that answered nothing after its tools still showed its earlier words: keep those.
        const text = outcome.text || (round > 1 ? lastText : "");
        appended.push({ role: "assistant", content: text });
        yield finish("stop", text, round);
        return;
      }
      if (toolRounds >= deps.maxToolRounds) {
        const text = fuseMessage(deps.maxToolRounds, history);
        appended.push({ role: "assistant", content: text });
        yield finish("max-rounds", text, round);
        return;
      }
      toolRounds++;

      const calls = withUniqueIds(outcome.toolCalls);
      for (const call of calls) {
        yield { type: "tool-call", round, id: call.id, name: call.function.name, arguments: call.function.arguments };
      }
      const results = new Map<string, ToolOutcome>();
      const cap = deps.maxParallelCalls ?? DEFAULT_MAX_PARALLEL_CALLS;
      for (const { id, function: fn } of calls.slice(cap)) {
        const output = `Error: not run: at most ${cap} tool calls per round. Call ${fn.name} again next round if it is still needed.`;
        const skipped: ToolOutcome = { id, name: fn.name, ok: false, output, durationMs: 0 };
        results.set(id, skipped);
        yield { type: "tool-result", round, ...skipped };
      }
      const running = new Map(calls.slice(0, cap).map((call) => [call.id, runner.run(call, toolSignal)]));
      while (running.size > 0) {
        const done = await Promise.race(running.values());
        running.delete(done.id);
        results.set(done.id, done);
        yield { type: "tool-result", round, ...done };
      }
      if (signal?.aborted) {
        yield finish("aborted", "", round);
        return;
      }
      // The assistant message goes back verbatim (content as written, calls as sent), then one result per call.
      appended.push({ role: "assistant", content: outcome.text, tool_calls: calls });
      for (const call of calls) {
        appended.push({
          role: "tool",
          tool_call_id: call.id,
          content: results.get(call.id)?.output ?? "Error: no result.",
        });
      }
    }
  } finally {
    abandoned.abort();
  }

  /** Opens a round's stream; a refusal for context size gets one retry on a history cut harder. */
  async function startRound(
    body: () => ChatCompletionCreateParamsStreaming & Record<string, unknown>,
  ): Promise<{ stream: ReturnType<typeof streamRound>; first: IteratorResult<StreamDelta, StreamRoundResult> }> {
    for (;;) {
      const stream = streamRound(deps.client, body(), { idleTimeoutMs, signal });
      try {
        return { stream, first: await stream.next() };
      } catch (error) {
        await stream.return(undefined as never);
        if (shrunk || !input.shrinkHistory || !(error instanceof ModelError) || error.code !== "context-exceeded")
          throw error;
        shrunk = true;
        const shorter = await input.shrinkHistory(history, { excessTokens: error.excessTokens });
        if (!shorter) throw error;
        history = shorter;
      }
    }
  }
}

/** History → request. `name` is dropped: the content already says who spoke, and OpenAI rejects non-ASCII names. */
export function toRequestMessage(message: ChatMessage): ChatCompletionMessageParam {
  switch (message.role) {
    case "system":
      return { role: "system", content: message.content };
    case "user":
      return toUserRequestMessage(message);
    case "assistant":
      return message.tool_calls?.length
        ? { role: "assistant", content: message.content, tool_calls: message.tool_calls }
        : { role: "assistant", content: message.content };
    case "tool":
      return { role: "tool", tool_call_id: message.tool_call_id, content: message.content };
  }
}

/** Pairing by id needs unique ids; a server that repeats one (or a model that copies one) gets fresh ones. */
function withUniqueIds(calls: ToolCallRecord[]): ToolCallRecord[] {
  const seen = new Set<string>();
  return calls.map((call) => {
    if (!seen.has(call.id)) {
      seen.add(call.id);
      return call;
    }
    const id = generateToolCallId();
    seen.add(id);
    return { ...call, id };
  });
}

function addUsage(total: Usage | undefined, more: Usage): Usage {
  const sum: Usage = {
    promptTokens: (total?.promptTokens ?? 0) + more.promptTokens,
    completionTokens: (total?.completionTokens ?? 0) + more.completionTokens,
  };
  if (total?.cachedTokens !== undefined || more.cachedTokens !== undefined)
    sum.cachedTokens = (total?.cachedTokens ?? 0) + (more.cachedTokens ?? 0);
  return sum;
}

/** The message the user sees when the fuse blows, in their language. */
function fuseMessage(maxToolRounds: number, messages: ChatMessage[]): string {
  const lastUser = [...messages].reverse().find((m) => m.role === "user");
  const chinese = lastUser !== undefined && /\p{Script=Han}/u.test(lastUser.content);
  return chinese
    ? `抱歉，我已经连续调用了 ${maxToolRounds} 轮工具，仍然没有得到完整的答案。请换个问法，或者把问题拆小一点再问我。`
    : `Sorry, I used tools for ${maxToolRounds} rounds and still do not have a complete answer. Please rephrase the question or ask a smaller part of it.`;
}
