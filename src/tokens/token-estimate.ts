/**
 * A cheap token estimate, no tokenizer needed: wide (CJK) characters about one token each, Latin text about four
 * characters a token. It errs generous, so a budget is kept rather than exceeded.
 */
import type { ChatMessage } from "../contracts/chat-message.js";

/** Estimated tokens of a piece of text. */
export function estimateTextTokens(text: string): number {
  let wide = 0;
  let narrow = 0;
  for (const ch of text) {
    if ((ch.codePointAt(0) ?? 0) >= 0x2e80) wide++;
    else narrow++;
  }
  return wide + Math.ceil(narrow / 4);
}

/** Estimated tokens of one message as the model sees it (content, speaker, tool calls, framing). */
export function estimateMessageTokens(message: ChatMessage): number {
  // About four tokens of chat-template framing per message.
  let tokens = 4 + estimateTextTokens(message.content);
  if (message.role === "user" && message.name) tokens += estimateTextTokens(message.name);
  if (message.role === "tool") tokens += 2;
  if (message.role === "assistant")
    for (const call of message.tool_calls ?? [])
      tokens += 4 + estimateTextTokens(call.function.name) + estimateTextTokens(call.function.arguments);
  return tokens;
}
