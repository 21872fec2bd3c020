/**
 * Putting a message into a chat the way Telegram threads it (forum topics, reply threads of
 * ordinary supergroups, none in private chats and basic groups), and whether the bot gets to
 * see a user's message (privacy mode in groups).
 */
import type { ChatState, StoredMessage, TelegramState } from "./state.js";

/** What a new message is made of; the store adds its id, thread, date and edit record. */
export type NewMessage = Pick<StoredMessage, "from" | "text" | "entities"> &
  Partial<
    Pick<
      StoredMessage,
      "replyToMessageId" | "threadId" | "source" | "parseMode" | "replyMarkup" | "forumTopicCreated" | "media"
    >
  >;

/** Stores a message in a chat, with the thread and reply Telegram would give it. */
export function storeMessage(state: TelegramState, chatState: ChatState, m: NewMessage): StoredMessage {
  const chat = chatState.chat;
  const isForum = chat.type === "supergroup" && chat.is_forum === true;
  let threadId = m.threadId;
  let isTopicMessage = false;
  let replyTo = m.replyToMessageId;
  if (chat.type === "private" || chat.type === "group") {
    threadId = undefined;
  } else if (isForum) {
    if (threadId !== undefined && !m.forumTopicCreated) {
      if (!chatState.topics.has(threadId)) throw new Error(`fake Telegram: no topic ${threadId} in chat ${chat.id}`);
    }
    if (threadId === undefined && replyTo !== undefined) threadId = chatState.messages.get(replyTo)?.threadId;
    if (threadId !== undefined) {
      isTopicMessage = true;
      // In a topic, a message that answers nothing in particular replies to the topic's creation message.
      if (replyTo === undefined && !m.forumTopicCreated) replyTo = threadId;
    }
  } else if (replyTo !== undefined) {
    // Ordinary supergroups: a reply belongs to the reply thread of the message it answers.
    const target = chatState.messages.get(replyTo);
    threadId = target ? (target.threadId ?? target.messageId) : undefined;
  } else {
    threadId = undefined;
  }
  const at = state.now();
  const msg: StoredMessage = {
    chatId: chat.id,
    messageId: chatState.nextMessageId++,
    ...(threadId !== undefined ? { threadId } : {}),
    isTopicMessage,
    from: m.from,
    date: Math.floor(at / 1000),
    text: m.text,
    entities: m.entities,
    ...(m.source !== undefined ? { source: m.source } : {}),
    ...(m.parseMode !== undefined ? { parseMode: m.parseMode } : {}),
    ...(replyTo !== undefined ? { replyToMessageId: replyTo } : {}),
    ...(m.replyMarkup ? { replyMarkup: m.replyMarkup } : {}),
    ...(m.forumTopicCreated ? { forumTopicCreated: m.forumTopicCreated } : {}),
    ...(m.media ? { media: m.media } : {}),
    sentAt: at,
    editCount: 0,
    deleted: false,
    history: [m.text],
  };
  if (m.forumTopicCreated) msg.threadId = msg.messageId;
  chatState.messages.set(msg.messageId, msg);
  state.changed();
  return msg;
}

/** Whether the bot receives a user's message: always without privacy mode; in groups with it only commands, its @mention and replies to it. */
export function deliversToBot(state: TelegramState, chatState: ChatState, msg: StoredMessage): boolean {
  const { me } = state;
  if (!state.privacyMode || chatState.chat.type === "private") return true;
  if (msg.text.startsWith("/")) return true;
  if (
    msg.entities.some(
      (e) =>
        e.type === "mention" &&
        msg.text.slice(e.offset, e.offset + e.length).toLowerCase() === `@${me.username.toLowerCase()}`,
    )
  )
    return true;
  const target = msg.replyToMessageId !== undefined ? chatState.messages.get(msg.replyToMessageId) : undefined;
  return target !== undefined && !target.forumTopicCreated && target.from.id === me.id;
}
