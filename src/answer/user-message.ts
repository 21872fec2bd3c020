/**
 * How a queued message reads to the model. In shared conversations (groups,
 * channels) every user message carries its speaker, so the model can answer
 * "what did Alice ask?"; a reply carries a short quote of what it replies to.
 */
import type { ChatMessage } from "../contracts/chat-message.js";
import type { InboundMessage } from "../contracts/inbound-message.js";
import { chatPacingKey } from "../reply/rate-gate.js";
import { cutText, cutTextWithMarker } from "../shared/text-cut.js";

const QUOTE_CHARS = 300;

/** Single-line, trimmed speaker name (a name cannot forge a new line of the transcript). */
function speaker(name: string): string {
  const clean = name.replace(/[\r\n\t]+/g, " ").replace(/:/g, "꞉").trim();
  return clean === "" ? "someone" : cutText(clean, 64);
}

/** The history entry for an inbound message; `attachmentText` (markers, inlined files) follows the question. */
export function toUserMessage(message: InboundMessage, attachmentText = ""): ChatMessage {
  const shared = message.chatType !== "private";
  const question = message.text.trim();
  let content = attachmentText === "" ? question : question === "" ? attachmentText : `${question}\n${attachmentText}`;
  const quoted = message.replyTo?.text?.trim();
  if (quoted) {
    const cut = cutTextWithMarker(quoted, QUOTE_CHARS, "…");
    const who = message.replyTo?.authorName ? speaker(message.replyTo.authorName) : "an earlier message";
    content = `(replying to ${who}: "${cut.replace(/\s+/g, " ")}")\n${content}`;
  }
  if (shared) content = `${speaker(message.author.displayName)}: ${content}`;
  return { role: "user", content };
}

/**
 * The pacing key of a chat: platform limits apply per chat, so the forum topics
 * of a Telegram group share the group's budget.
 */
export function pacingKey(message: InboundMessage): string {
  return chatPacingKey(message.platform, message.chatId);
}
