/** How a conversation's running summary reaches the model: one system note before the kept turns. */
import type { ChatMessage } from "../contracts/chat-message.js";

/** The system note that carries a summary. */
export function summaryNote(summary: string): ChatMessage {
  return { role: "system", content: `Earlier in this conversation: ${summary}` };
}
