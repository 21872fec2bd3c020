/**
 * Folds old turns into a short running summary written by the model (one request, thinking off), in the chat's
 * language and, in a group, saying who said what. After an answer the request is the conversation's own last one
 * with the instruction appended, so the server reads only the instruction again; without it (`/compact`), a short
 * transcript under a system prompt of its own.
 */
import type OpenAI from "openai";
import type { ChatMessage } from "../contracts/chat-message.js";
import type { RequestPrefix } from "../contracts/agent-events.js";
import { toRequestMessage } from "./run-agent.js";
import { dialectFields, type ModelServer } from "./model-dialect.js";
import { toModelError } from "./model-error.js";

/** What summarising needs (the same client and model as the answers). */
export interface SummarizerDeps {
  client: OpenAI;
  model: string;
  modelServer: ModelServer;
  /** Cap on the summary's length in tokens. */
  maxSummaryTokens?: number;
}

/** One summarising job. */
export interface SummaryRequest {
  /** The summary so far, if any: the new one replaces it and must keep what it said. */
  previous?: string;
  /** The turns to fold in, oldest first. */
  messages: readonly ChatMessage[];
  /** A group or channel: user messages already start with `Name:`, and the summary must keep the names. */
  shared: boolean;
  /** The conversation as its last request carried it (system prompt, tools, note, kept turns): asked at its end. */
  conversation?: { prefix: RequestPrefix; messages: readonly ChatMessage[] };
  signal?: AbortSignal;
}

/** Writes summaries; throws ModelError when the server fails, Error when the answer is empty. */
export type Summarizer = (request: SummaryRequest) => Promise<string>;

const TOOL_RESULT_CHARS = 300;
const MESSAGE_CHARS = 1500;

const INSTRUCTIONS = [
  "You summarise a chat so it can be continued later.",
  "Write in the same language as the chat.",
  "Keep names, facts, numbers, dates, places, decisions and open questions. Drop greetings and small talk.",
  "Plain sentences, no lists, no preamble.",
];

/** One message as a transcript line. */
function transcriptLine(message: ChatMessage, shared: boolean): string {
  const cut = (text: string, max: number): string => (text.length > max ? `${text.slice(0, max)}…` : text);
  switch (message.role) {
    case "user":
      return shared ? cut(message.content, MESSAGE_CHARS) : `User: ${cut(message.content, MESSAGE_CHARS)}`;
    case "assistant": {
      const calls = (message.tool_calls ?? []).map((c) => `${c.function.name}(${cut(c.function.arguments, 200)})`);
      const said = message.content.trim() ? `Assistant: ${cut(message.content, MESSAGE_CHARS)}` : "";
      return [said, calls.length ? `Assistant used ${calls.join(", ")}` : ""].filter(Boolean).join("\n");
    }
    case "tool":
      return `Tool result: ${cut(message.content.replace(/\s+/g, " "), TOOL_RESULT_CHARS)}`;
    case "system":
      return `Note: ${cut(message.content, MESSAGE_CHARS)}`;
  }
}

/** The prompt of a transcript summary. */
function summaryPrompt(request: SummaryRequest, maxWords: number): { system: string; user: string } {
  const rules = [...INSTRUCTIONS, `At most ${maxWords} words.`];
  if (request.shared) rules.splice(3, 0, "This is a group chat: say who said or asked what, by name.");
  const transcript = request.messages
    .map((m) => transcriptLine(m, request.shared))
    .filter(Boolean)
    .join("\n");
  const user = request.previous?.trim()
    ? `Summary so far:\n${request.previous.trim()}\n\nNew messages:\n${transcript}\n\nWrite the updated summary.`
    : `Chat:\n${transcript}\n\nWrite the summary.`;
  return { system: rules.join(" "), user };
}

/** The instruction that ends a summary request over the conversation's own prefix. */
function summaryInstruction(shared: boolean, maxWords: number): string {
  return [
    "Now write a summary of this whole conversation, the earlier summary included, so it can be continued later.",
    ...INSTRUCTIONS.slice(1),
    ...(shared ? ["Say who said or asked what, by name."] : []),
    `At most ${maxWords} words. Do not call tools.`,
  ].join(" ");
}

/** The messages (and tools) of a summary request. */
function summaryMessages(request: SummaryRequest, maxWords: number): Record<string, unknown> {
  if (request.conversation) {
    const { prefix, messages } = request.conversation;
    return {
      messages: [
        { role: "system", content: prefix.system },
        ...messages.map(toRequestMessage),
        { role: "user", content: summaryInstruction(request.shared, maxWords) },
      ],
      // The same tools as the conversation's requests, so the prompt starts the same; `none`: text, not calls.
      ...(prefix.tools.length ? { tools: prefix.tools, tool_choice: "none" } : {}),
    };
  }
  const prompt = summaryPrompt(request, maxWords);
  return {
    messages: [
      { role: "system", content: prompt.system },
      { role: "user", content: prompt.user },
    ],
  };
}

/** Builds the summarizer over the model client. */
export function createSummarizer(deps: SummarizerDeps): Summarizer {
  const maxTokens = deps.maxSummaryTokens ?? 400;
  // About 1.3 tokens a word in English (Chinese is about one per character): the words cap keeps inside maxTokens.
  const maxWords = Math.max(40, Math.floor(maxTokens / 2));
  return async (request) => {
    let completion: OpenAI.Chat.Completions.ChatCompletion;
    try {
      completion = await deps.client.chat.completions.create(
        {
          model: deps.model,
          ...summaryMessages(request, maxWords),
          stream: false,
          ...dialectFields(deps.modelServer, { enableThinking: false, maxTokens, temperature: 0.3 }),
        } as OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming,
        request.signal ? { signal: request.signal } : {},
      );
    } catch (error) {
      throw toModelError(error);
    }
    const raw = completion.choices[0]?.message?.content ?? "";
    // A server that ignores the thinking switch still wraps its reasoning in <think>: keep only the answer.
    const text = raw.replace(/<think>[\s\S]*?(<\/think>|$)/g, "").trim();
    if (!text) throw new Error("the model wrote an empty summary");
    return text;
  };
}
