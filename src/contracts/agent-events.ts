/** The agent loop's output: one platform-neutral union; consumers switch on `type` exhaustively. */
import type { ChatMessage } from "./chat-message.js";

/** Token counts as the server reported them (summed over rounds in `finish`). */
export interface Usage {
  promptTokens: number;
  completionTokens: number;
  /** Of `promptTokens`, those read from the server's prompt cache (`timings.cache_n`, `cached_tokens`), if said. */
  cachedTokens?: number;
  /** Milliseconds the server spent reading the prompt (llama.cpp's `timings.prompt_ms`), when it said. */
  promptMs?: number;
}

/** What every request of a conversation starts with, exactly as sent (a request starting so hits the cache). */
export interface RequestPrefix {
  system: string;
  /** The `tools` array as sent (empty: none). */
  tools: readonly unknown[];
}

/** Why a round of streaming ended, normalised across servers. */
export type RoundFinishReason = "stop" | "tool_calls" | "length" | "content_filter" | "unknown";

/** Why the whole loop ended. */
export type FinishReason =
  | "stop" // a final answer
  | "length" // the answer was cut at max_tokens
  | "max-rounds" // the MAX_TOOL_ROUNDS fuse blew
  | "aborted"; // the AbortSignal fired (/stop, shutdown)

export type AgentEvent =
  | { type: "reasoning-delta"; round: number; text: string }
  | { type: "text-delta"; round: number; text: string }
  /** A call the model asked for, about to run (arguments are the raw text the model wrote). */
  | { type: "tool-call"; round: number; id: string; name: string; arguments: string }
  /** A call's outcome; `ok: false` means the observation sent back is an error message. */
  | { type: "tool-result"; round: number; id: string; name: string; ok: boolean; output: string; durationMs: number }
  | { type: "round-finish"; round: number; reason: RoundFinishReason; usage?: Usage }
  | {
      type: "finish";
      reason: FinishReason;
      /** The visible answer (no reasoning, no tool-call markup). */
      text: string;
      /** What to append to the history after the user's message: tool calls, their results, the answer. */
      messages: ChatMessage[];
      usage?: Usage;
      /** The system prompt and tools the loop's requests started with. */
      prefix?: RequestPrefix;
      rounds: number;
    };

/** Compile-time exhaustiveness check for switches over unions. */
export function assertNever(value: never): never {
  throw new Error(`unexpected value: ${JSON.stringify(value)}`);
}
