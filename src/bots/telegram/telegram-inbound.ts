/** Turns an addressed Telegram message into the queue payload (InboundMessage). */
import type { Message, User } from "grammy/types";
import { inboundMessageSchema, type InboundMessage } from "../../contracts/inbound-message.js";
import { realReplyOf, telegramConversationKey, topicOf } from "./telegram-conversation.js";
import { cutText } from "../../shared/text-cut.js";
import { telegramAttachments } from "./telegram-attachments.js";

const DEFAULT_MAX_IMAGE_BYTES = 10 * 1024 * 1024;

/** How a user is called in a shared group conversation: "First Last", else @username, else "User <id>". */
export function telegramDisplayName(user: Pick<User, "id" | "first_name" | "last_name" | "username">): string {
  const name = [user.first_name, user.last_name]
    .filter((p) => p && p.trim() !== "")
    .join(" ")
    .trim();
  const shown = name !== "" ? name : user.username ? `@${user.username}` : `User ${user.id}`;
  return cutText(shown, 200);
}

/** Builds and validates the payload for a question; throws a ZodError if Telegram sent something unexpected. */
export function toInboundMessage(
  message: Message,
  question: string,
  receivedAt: number,
  maxImageBytes = DEFAULT_MAX_IMAGE_BYTES,
): InboundMessage {
  const from = message.from as User;
  const threadId = topicOf(message);
  const reply = realReplyOf(message);
  const quoted = message.quote?.text;
  const replyText = quoted ?? reply?.text ?? reply?.caption;
  const attachments = telegramAttachments(message, reply, maxImageBytes);
  const replyAuthor = reply?.from
    ? telegramDisplayName(reply.from)
    : reply?.sender_chat && "title" in reply.sender_chat
      ? reply.sender_chat.title
      : undefined;
  return inboundMessageSchema.parse({
    platform: "telegram",
    conversationKey: telegramConversationKey(message.chat.id, threadId),
    chatId: String(message.chat.id),
    ...(threadId !== undefined ? { threadId: String(threadId) } : {}),
    messageId: String(message.message_id),
    chatType: message.chat.type === "private" ? "private" : "group",
    author: {
      id: String(from.id),
      displayName: telegramDisplayName(from),
      ...(from.username ? { username: from.username } : {}),
    },
    text: question,
    ...(reply
      ? {
          replyTo: {
            messageId: String(reply.message_id),
            ...(replyAuthor ? { authorName: cutText(replyAuthor, 200) } : {}),
            ...(replyText ? { text: cutText(replyText, 4000) } : {}),
          },
        }
      : {}),
    receivedAt,
    ...(attachments.length > 0 ? { attachments } : {}),
  });
}
