/**
 * sendMessage, editMessageText, sendMessageDraft and deleteMessage: what the bot writes into a
 * chat, with the real server's checks (empty or over-long text, a missing reply target, an edit
 * that changes nothing, someone else's message) and its flood limits on sends and edits.
 */
import { telegramTextLength } from "../telegram-html.js";
import { toApiMessage } from "./api-objects.js";
import { checkMarkup, checkThread, parseText } from "./message-input.js";
import { storeMessage } from "./message-store.js";
import type { MethodTable } from "./method-dispatch.js";
import { ApiFailure, bad } from "./method-outcomes.js";
import { bool, chatFromParam, int, jsonArg, sameJson, str } from "./method-params.js";
import type { ChatState, TelegramState } from "./state.js";

const NOT_MODIFIED =
  "message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message";
/** How long Telegram shows a draft without a refresh. */
const DRAFT_TTL_MS = 30_000;

/** Counts a send or an edit against the flood limits; throws the 429 the real server answers when over. */
function admitFlood(state: TelegramState, method: string, chatState: ChatState): void {
  const isGroup = chatState.chat.type === "group" || chatState.chat.type === "supergroup";
  const verdict = state.flood.admit(method, chatState.chat.id, isGroup, state.now());
  if (!verdict.ok) {
    throw new ApiFailure(429, `Too Many Requests: retry after ${verdict.retryAfter}`, {
      retry_after: verdict.retryAfter,
    });
  }
}

/** The sendMessage handler. */
function sendMessage(state: TelegramState, p: Record<string, unknown>): unknown {
  const chatState = chatFromParam(state, p.chat_id);
  const raw = str(p.text);
  if (raw === undefined || raw === "") return bad("message text is empty");
  const parsed = parseText(raw, p);
  if (parsed.text === "") return bad("text must be non-empty");
  if (telegramTextLength(parsed.text) > 4096) return bad("message is too long");
  const markup = checkMarkup(p.reply_markup);

  let threadId = int(p.message_thread_id);
  if (threadId !== undefined) checkThread(chatState, threadId);
  const replyParams = (
    p.reply_parameters !== undefined ? jsonArg(p.reply_parameters, "reply parameters") : undefined
  ) as { message_id?: number; allow_sending_without_reply?: boolean } | undefined;
  const replyId = replyParams?.message_id ?? int(p.reply_to_message_id);
  let replyTo: number | undefined;
  if (replyId !== undefined) {
    const target = chatState.messages.get(replyId);
    if (!target || target.deleted) {
      const allow = replyParams?.allow_sending_without_reply ?? bool(p.allow_sending_without_reply);
      if (!allow) return bad("message to be replied not found");
    } else {
      replyTo = replyId;
      // A reply lands in the topic of the message it answers.
      if (
        threadId === undefined &&
        target.threadId !== undefined &&
        chatState.chat.type === "supergroup" &&
        chatState.chat.is_forum
      )
        threadId = target.threadId;
    }
  }

  admitFlood(state, "sendMessage", chatState);
  const msg = storeMessage(state, chatState, {
    from: state.me,
    text: parsed.text,
    entities: parsed.entities,
    source: raw,
    ...(str(p.parse_mode) ? { parseMode: str(p.parse_mode) as string } : {}),
    ...(replyTo !== undefined ? { replyToMessageId: replyTo } : {}),
    ...(threadId !== undefined ? { threadId } : {}),
    ...(markup ? { replyMarkup: markup } : {}),
  });
  // A message from the bot ends the drafts shown in that chat.
  chatState.drafts.delete(String(threadId ?? 0));
  return toApiMessage(state, msg);
}

/** The editMessageText handler. */
function editMessageText(state: TelegramState, p: Record<string, unknown>): unknown {
  if (p.inline_message_id !== undefined) return bad("inline messages are not supported by the fake");
  const chatState = chatFromParam(state, p.chat_id);
  const messageId = int(p.message_id);
  if (messageId === undefined) return bad("message identifier is not specified");
  const raw = str(p.text);
  if (raw === undefined || raw === "") return bad("message text is empty");
  const msg = chatState.messages.get(messageId);
  if (!msg || msg.deleted || msg.forumTopicCreated) return bad("message to edit not found");
  if (msg.from.id !== state.me.id) return bad("message can't be edited");
  const parsed = parseText(raw, p);
  if (parsed.text === "") return bad("text must be non-empty");
  if (telegramTextLength(parsed.text) > 4096) return bad("message is too long");
  const markup = checkMarkup(p.reply_markup);
  // Leaving reply_markup out of an edit removes the inline keyboard.
  if (parsed.text === msg.text && sameJson(parsed.entities, msg.entities) && sameJson(markup, msg.replyMarkup))
    return bad(NOT_MODIFIED);

  admitFlood(state, "editMessageText", chatState);
  msg.text = parsed.text;
  msg.entities = parsed.entities;
  msg.source = raw;
  const parseMode = str(p.parse_mode);
  if (parseMode) msg.parseMode = parseMode;
  else delete msg.parseMode;
  if (markup) msg.replyMarkup = markup;
  else delete msg.replyMarkup;
  msg.editCount++;
  msg.editedAt = state.now();
  msg.history.push(parsed.text);
  return { ...toApiMessage(state, msg), edit_date: Math.floor(state.now() / 1000) };
}

/** The sendMessageDraft handler (private chats only; a draft lives until a message or DRAFT_TTL_MS). */
function sendMessageDraft(state: TelegramState, p: Record<string, unknown>): unknown {
  const chatState = chatFromParam(state, p.chat_id);
  const draftId = int(p.draft_id);
  if (!draftId) return bad("draft_id must be non-zero");
  if (chatState.chat.type !== "private") return bad("TEXTDRAFT_PEER_INVALID");
  const raw = str(p.text) ?? "";
  // An empty draft is allowed: Telegram shows "Thinking…".
  const parsed = raw === "" ? { text: "", entities: [] } : parseText(raw, p);
  if (telegramTextLength(parsed.text) > 4096) return bad("message is too long");
  const threadId = int(p.message_thread_id);
  const key = String(threadId ?? 0);
  const previous = chatState.drafts.get(key);
  const at = state.now();
  chatState.drafts.set(key, {
    chatId: chatState.chat.id,
    ...(threadId !== undefined ? { threadId } : {}),
    draftId,
    text: parsed.text,
    entities: parsed.entities,
    updatedAt: at,
    updates: previous && previous.draftId === draftId ? previous.updates + 1 : 1,
    canStop: bool(p.can_stop),
    expiresAt: at + DRAFT_TTL_MS,
  });
  return true;
}

/** The handlers of what the bot writes. */
export function messageMethods(state: TelegramState): MethodTable {
  return {
    sendmessage: (p) => sendMessage(state, p),
    editmessagetext: (p) => editMessageText(state, p),
    sendmessagedraft: (p) => sendMessageDraft(state, p),
    deletemessage(p) {
      const chatState = chatFromParam(state, p.chat_id);
      const msg = chatState.messages.get(int(p.message_id) ?? -1);
      if (!msg || msg.deleted) return bad("message to delete not found");
      if (msg.from.id !== state.me.id && chatState.chat.type !== "private") return bad("message can't be deleted");
      msg.deleted = true;
      return true;
    },
  };
}
