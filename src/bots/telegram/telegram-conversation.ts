/**
 * Where a Telegram message belongs. Forum topics are conversations of their own; the reply threads of
 * ordinary supergroups are not (they carry a message_thread_id too, but no is_topic_message).
 */
import type { Message } from "grammy/types";

/** History key: `tg:<chat_id>`, or `tg:<chat_id>:<thread_id>` in a forum topic. */
export function telegramConversationKey(chatId: number | string, threadId?: number | string): string {
  return threadId === undefined ? `tg:${chatId}` : `tg:${chatId}:${threadId}`;
}

/** The forum topic a message was written in, if any. */
export function topicOf(message: Pick<Message, "message_thread_id" | "is_topic_message">): number | undefined {
  return message.is_topic_message && message.message_thread_id !== undefined ? message.message_thread_id : undefined;
}

/** The message this one really replies to: in a forum topic reply_to_message may be just the topic's start. */
export function realReplyOf(message: Message): Message | undefined {
  const target = message.reply_to_message;
  if (!target) return undefined;
  if (target.forum_topic_created) return undefined;
  if (message.is_topic_message && target.message_id === message.message_thread_id) return undefined;
  return target as Message;
}
