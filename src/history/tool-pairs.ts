/**
 * The tools protocol wants every `tool_calls` message followed by one `tool` message per call, and no stray
 * `tool` message: checked on load, so a damaged history costs a group of messages, not a 400 from the server.
 */
import type { ChatMessage } from "../contracts/chat-message.js";

/** Drops stray `tool` messages and incomplete tool-call groups; everything else is kept in order. */
export function repairToolPairs(messages: readonly ChatMessage[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  let i = 0;
  while (i < messages.length) {
    const message = messages[i] as ChatMessage;
    if (message.role === "tool") {
      i++;
      continue;
    }
    if (message.role !== "assistant" || !message.tool_calls?.length) {
      out.push(message);
      i++;
      continue;
    }
    const wanted = new Set(message.tool_calls.map((call) => call.id));
    const results = new Map<string, ChatMessage>();
    let j = i + 1;
    for (; j < messages.length; j++) {
      const next = messages[j] as ChatMessage;
      if (next.role !== "tool") break;
      if (wanted.has(next.tool_call_id) && !results.has(next.tool_call_id)) results.set(next.tool_call_id, next);
    }
    if (results.size === wanted.size) out.push(message, ...results.values());
    i = j;
  }
  return out;
}
