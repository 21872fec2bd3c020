/**
 * Which stored messages a request can carry: the newest that fit the budget, starting where the store's
 * trimming would (a user message, else an assistant one, never a `tool` message).
 */
import type { ChatMessage } from "../contracts/chat-message.js";

/** A stored message with its token count. */
export interface CountedMessage {
  message: ChatMessage;
  tokens: number;
}

/** The split: `dropped` (oldest first) did not fit, `kept` did. */
export interface FittedHistory {
  kept: CountedMessage[];
  dropped: CountedMessage[];
  keptTokens: number;
}

/** How good a place to start the history a message is: 2 user (or system), 1 assistant, 0 never. */
function startQuality(message: ChatMessage): number {
  if (message.role === "user" || message.role === "system") return 2;
  if (message.role === "assistant") return 1;
  return 0;
}

/** Keeps the newest messages that fit `budget` tokens (all of them when they do). */
export function fitHistory(messages: readonly CountedMessage[], budget: number): FittedHistory {
  let total = 0;
  let best: number | undefined;
  let fallback: number | undefined;
  for (let i = messages.length - 1; i >= 0; i--) {
    total += (messages[i] as CountedMessage).tokens;
    if (total > budget) break;
    const quality = startQuality((messages[i] as CountedMessage).message);
    if (quality === 2) best = i;
    else if (quality === 1) fallback = i;
  }
  const cut = best ?? fallback ?? messages.length;
  const kept = messages.slice(cut);
  return { kept, dropped: messages.slice(0, cut), keptTokens: kept.reduce((sum, m) => sum + m.tokens, 0) };
}
