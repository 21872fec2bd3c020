/**
 * A cheap token estimate for history budgets, no tokenizer needed. CJK and other wide
 * characters are about one token each; Latin text is about four characters a token.
 * It errs on the generous side, so a budget in tokens is kept rather than exceeded.
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
  switch (message.role) {
    case "user":
      if (message.name) tokens += estimateTextTokens(message.name);
      break;
    case "assistant":
      for (const call of message.tool_calls ?? []) {
        tokens += 4 + estimateTextTokens(call.function.name) + estimateTextTokens(call.function.arguments);
      }
      break;
    case "tool":
      tokens += 2;
      break;
    case "system":
      break;
    default: {
      const never: never = message;
      return never;
    }
  }
  return tokens;
}
