/**
 * How the fake's users, chats and messages look on the wire (the Bot API's User, Chat and
 * Message objects) and to tests (ChatMessageView).
 */
import type { ChatMessageView, FakeChat, FakeUser } from "../telegram-server.js";
import type { ChatState, StoredMessage, TelegramState } from "./state.js";

/** A Bot API User. */
export function apiUser(u: FakeUser): Record<string, unknown> {
  return {
    id: u.id,
    is_bot: u.is_bot ?? false,
    first_name: u.first_name,
    ...(u.last_name ? { last_name: u.last_name } : {}),
    ...(u.username ? { username: u.username } : {}),
    ...(u.language_code ? { language_code: u.language_code } : {}),
  };
}

/** A Bot API Chat. */
export function apiChat(chat: FakeChat): Record<string, unknown> {
  return { ...chat };
}

/** A Bot API Message; the message it replies to is nested one level deep, as Telegram does. */
export function toApiMessage(state: TelegramState, msg: StoredMessage, nested = false): Record<string, unknown> {
  const chatState = state.chats.get(msg.chatId) as ChatState;
  const out: Record<string, unknown> = {
    message_id: msg.messageId,
    from: apiUser(msg.from),
    chat: apiChat(chatState.chat),
    date: msg.date,
  };
  if (msg.threadId !== undefined) out.message_thread_id = msg.threadId;
  if (msg.isTopicMessage) out.is_topic_message = true;
  if (msg.forumTopicCreated) out.forum_topic_created = msg.forumTopicCreated;
  else if (msg.media) Object.assign(out, msg.media, msg.text ? { caption: msg.text } : {});
  else out.text = msg.text;
  if (msg.entities.length > 0) out[msg.media ? "caption_entities" : "entities"] = msg.entities;
  if (msg.editedAt !== undefined) out.edit_date = Math.floor(msg.editedAt / 1000);
  if (msg.replyMarkup) out.reply_markup = msg.replyMarkup;
  if (!nested && msg.replyToMessageId !== undefined) {
    const target = chatState.messages.get(msg.replyToMessageId);
    if (target && !target.deleted) out.reply_to_message = toApiMessage(state, target, true);
  }
  return out;
}

/** A message as a user sees it, as it stands now (its history is copied). */
export function viewOf(state: TelegramState, m: StoredMessage): ChatMessageView {
  const keyboard = (m.replyMarkup as { inline_keyboard?: ChatMessageView["buttons"] } | undefined)?.inline_keyboard;
  return {
    chatId: m.chatId,
    messageId: m.messageId,
    ...(m.threadId !== undefined ? { threadId: m.threadId } : {}),
    from: m.from,
    fromBot: m.from.id === state.me.id,
    text: m.text,
    entities: m.entities,
    ...(m.source !== undefined ? { source: m.source } : {}),
    ...(m.parseMode !== undefined ? { parseMode: m.parseMode } : {}),
    ...(m.replyToMessageId !== undefined ? { replyToMessageId: m.replyToMessageId } : {}),
    ...(keyboard ? { buttons: keyboard } : {}),
    sentAt: m.sentAt,
    editCount: m.editCount,
    ...(m.editedAt !== undefined ? { editedAt: m.editedAt } : {}),
    deleted: m.deleted,
    history: [...m.history],
  };
}
