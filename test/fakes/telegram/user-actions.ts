/**
 * What happens on the fake's Telegram that the bot did not do: users write (text or files),
 * edit, press buttons and stop drafts, forum topics are created, members change status, an
 * earlier bot message is planted, and the API fails on cue.
 */
import type { FakeTelegram } from "../telegram-server.js";
import { apiChat, apiUser, toApiMessage, viewOf } from "./api-objects.js";
import { detectEntities } from "./entities.js";
import { deliversToBot, storeMessage } from "./message-store.js";
import { chatStateOf, requireChat, requireStored, type TelegramState } from "./state.js";
import type { PushUpdate } from "./update-queue.js";

/** The test's hands on the world (see FakeTelegram for each). */
export function createUserActions(
  state: TelegramState,
  pushUpdate: PushUpdate,
): Pick<
  FakeTelegram,
  | "addChat"
  | "userSays"
  | "userSendsFile"
  | "setMemberStatus"
  | "botSays"
  | "userEdits"
  | "userPresses"
  | "userStopsDraft"
  | "createForumTopic"
  | "failNext"
> {
  const { members, me, now, callbackQueries, failures } = state;
  return {
    addChat(chat) {
      chatStateOf(state, chat);
    },
    userSays(chat, user, text, opts = {}) {
      const chatState = chatStateOf(state, chat);
      if (!members.has(`${chat.id}:${user.id}`)) members.set(`${chat.id}:${user.id}`, { user, status: "member" });
      const msg = storeMessage(state, chatState, {
        from: user,
        text,
        entities: opts.entities ?? detectEntities(text),
        ...(opts.replyTo !== undefined ? { replyToMessageId: opts.replyTo } : {}),
        ...(opts.threadId !== undefined ? { threadId: opts.threadId } : {}),
      });
      const message = toApiMessage(state, msg);
      if (opts.quote !== undefined) message.quote = { text: opts.quote, position: 0 };
      if (!deliversToBot(state, chatState, msg)) return { updateId: undefined, message };
      return { updateId: pushUpdate({ message }), message };
    },
    async userSendsFile(chat, user, file, opts = {}) {
      const media = await state.files.media(file);
      const chatState = chatStateOf(state, chat);
      const caption = ("caption" in file ? file.caption : undefined) ?? "";
      const msg = storeMessage(state, chatState, {
        from: user,
        text: caption,
        entities: detectEntities(caption),
        media,
        ...(opts.replyTo !== undefined ? { replyToMessageId: opts.replyTo } : {}),
        ...(opts.threadId !== undefined ? { threadId: opts.threadId } : {}),
      });
      const message = toApiMessage(state, msg);
      if (!deliversToBot(state, chatState, msg)) return { updateId: undefined, message };
      return { updateId: pushUpdate({ message }), message };
    },
    setMemberStatus(chatId, user, status) {
      requireChat(state, chatId);
      members.set(`${chatId}:${user.id}`, { user, status });
    },
    botSays(chatId, text, opts = {}) {
      const msg = storeMessage(state, requireChat(state, chatId), {
        from: me,
        text,
        entities: [],
        ...(opts.threadId !== undefined ? { threadId: opts.threadId } : {}),
        ...(opts.replyTo !== undefined ? { replyToMessageId: opts.replyTo } : {}),
      });
      return viewOf(state, msg);
    },
    userEdits(chatId, messageId, text) {
      const msg = requireStored(state, chatId, messageId);
      msg.text = text;
      msg.entities = detectEntities(text);
      msg.editCount++;
      msg.editedAt = now();
      msg.history.push(text);
      const message = { ...toApiMessage(state, msg), edit_date: Math.floor(now() / 1000) };
      return pushUpdate({ edited_message: message });
    },
    userPresses(chatId, user, messageId, data) {
      const msg = requireStored(state, chatId, messageId);
      const queryId = String(4_000_000_000_000 + state.callbackSeq++);
      callbackQueries.set(queryId, { answered: false });
      const updateId = pushUpdate({
        callback_query: {
          id: queryId,
          from: apiUser(user),
          message: toApiMessage(state, msg),
          chat_instance: String(-chatId * 7),
          data,
        },
      });
      return { queryId, updateId };
    },
    userStopsDraft(chatId, draftId, threadId) {
      const chatState = requireChat(state, chatId);
      return pushUpdate({
        stopped_message_generation: {
          chat: apiChat(chatState.chat),
          ...(threadId !== undefined ? { message_thread_id: threadId } : {}),
          draft_id: draftId,
        },
      });
    },
    createForumTopic(chatId, name, creator) {
      const chatState = requireChat(state, chatId);
      if (chatState.chat.type !== "supergroup" || !chatState.chat.is_forum)
        throw new Error(`chat ${chatId} is not a forum supergroup`);
      const id = chatState.nextMessageId;
      const msg = storeMessage(state, chatState, {
        from: creator,
        text: "",
        entities: [],
        threadId: id,
        forumTopicCreated: { name, icon_color: 7322096 },
      });
      chatState.topics.set(msg.messageId, name);
      return msg.messageId;
    },
    failNext(method, n, failure) {
      const key = method.toLowerCase();
      failures.set(key, [...(failures.get(key) ?? []), ...Array.from({ length: n }, () => failure)]);
    },
  };
}
