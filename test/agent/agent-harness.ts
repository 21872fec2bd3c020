/** Shared wiring for the loop tests: a real SDK client against the fake server. */
import type { ChatCompletionChunk } from "openai/resources/chat/completions";
import type { ChatMessage } from "../../src/contracts/chat-message.js";
import type { AgentEvent } from "../../src/contracts/agent-events.js";
import { createModelClient } from "../../src/agent/model-client.js";
import { runAgent, type AgentDeps } from "../../src/agent/run-agent.js";
import type { AgentTool } from "../../src/tools/tool.js";

/** Deps for `runAgent` pointed at `baseURL`, with test-friendly defaults. */
export function agentDeps(baseURL: string, tools: AgentTool[], overrides: Partial<AgentDeps> = {}): AgentDeps {
  return {
    client: createModelClient({ baseURL, apiKey: "sk-test", timeoutMs: 5_000 }),
    model: "qwen3-1.7b",
    modelServer: "llama.cpp",
    enableThinking: true,
    maxToolRounds: 5,
    maxTokens: 4096,
    toolTimeoutMs: 2_000,
    tools,
    now: () => new Date("2025-06-03T06:05:00Z"),
    timeZone: "Asia/Shanghai",
    ...overrides,
  };
}

/** A user message. */
export function user(content: string): ChatMessage {
  return { role: "user", content };
}

/** Runs the loop to the end and returns every event. */
export async function collect(deps: AgentDeps, messages: ChatMessage[], signal?: AbortSignal): Promise<AgentEvent[]> {
  const events: AgentEvent[] = [];
  for await (const event of runAgent(deps, { messages, ...(signal ? { signal } : {}) })) events.push(event);
  return events;
}

/** The one `finish` event (asserting there is exactly one, and last). */
export function finishOf(events: AgentEvent[]): Extract<AgentEvent, { type: "finish" }> {
  const finishes = events.filter((e) => e.type === "finish");
  if (finishes.length !== 1 || events.at(-1)?.type !== "finish")
    throw new Error(`expected exactly one final finish event, got ${finishes.length}`);
  return finishes[0] as Extract<AgentEvent, { type: "finish" }>;
}

/** Concatenated text deltas. */
export function streamedText(events: AgentEvent[]): string {
  return events.map((e) => (e.type === "text-delta" ? e.text : "")).join("");
}

/** Concatenated reasoning deltas. */
export function streamedReasoning(events: AgentEvent[]): string {
  return events.map((e) => (e.type === "reasoning-delta" ? e.text : "")).join("");
}

/** The chunks of an SSE body, parsed as the SDK would yield them (no `[DONE]`, error events kept as objects). */
export function parseSse(text: string): ChatCompletionChunk[] {
  return text
    .split("\n\n")
    .map((event) => event.replace(/^data: /, ""))
    .filter((data) => data !== "" && data !== "[DONE]")
    .map((data) => JSON.parse(data) as ChatCompletionChunk);
}
