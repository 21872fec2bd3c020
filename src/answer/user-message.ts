/** How a queued message reads to the model: in groups with its speaker; a reply with a quote of what it answers. */
import type { ChatMessage } from "../contracts/chat-message.js";
import type { InboundMessage } from "../contracts/inbound-message.js";
import { chatPacingKey } from "../contracts/platform-pacing.js";
import { cutText, cutTextWithMarker } from "../shared/text-cut.js";

const QUOTE_CHARS = 300;
/** A message the history no longer has (older, or from before the bot joined) is quoted at more length: it is the model's only copy. */
const FORGOTTEN_QUOTE_CHARS = 1200;

/** Single-line, trimmed speaker name (a name cannot forge a new line of the transcript). */
function speaker(name: string): string {
  const clean = name
    .replace(/[\r\n\t]+/g, " ")
    .replace(/:/g, "꞉")
    .trim();
  return clean === "" ? "someone" : cutText(clean, 64);
}

/** The history entry of a message; `remembered: false`: the quoted message is not in the history, so quote more. */
export function toUserMessage(
  message: InboundMessage,
  opts: { attachmentText?: string; remembered?: boolean } = {},
): ChatMessage {
  const attachmentText = opts.attachmentText ?? "";
  const shared = message.chatType !== "private";
  const question = message.text.trim();
  let content = attachmentText === "" ? question : question === "" ? attachmentText : `${question}\n${attachmentText}`;
  const quoted = message.replyTo?.text?.trim();
  if (quoted) {
    const max = opts.remembered === false ? FORGOTTEN_QUOTE_CHARS : QUOTE_CHARS;
    const cut = cutTextWithMarker(quoted, max, "…");
    const who = message.replyTo?.authorName ? speaker(message.replyTo.authorName) : "an earlier message";
    content = `(replying to ${who}: "${cut.replace(/\s+/g, " ")}")\n${content}`;
  }
  if (shared) content = `${speaker(message.author.displayName)}: ${content}`;
  return { role: "user", content };
}

/** The pacing key of a chat: limits apply per chat, so a Telegram group's forum topics share its budget. */
export function pacingKey(message: InboundMessage): string {
  return chatPacingKey(message.platform, message.chatId);
}
