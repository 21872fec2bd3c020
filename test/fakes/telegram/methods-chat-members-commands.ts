/**
 * getMe, sendChatAction, getChatMember, the command menu (setMyCommands, getMyCommands,
 * deleteMyCommands) and answerCallbackQuery: the bot's identity, what it shows and learns about
 * a chat and its members, and its answers to button presses.
 */
import { apiUser } from "./api-objects.js";
import { checkThread } from "./message-input.js";
import type { MethodTable } from "./method-dispatch.js";
import { bad } from "./method-outcomes.js";
import { bool, chatFromParam, int, jsonArg, str } from "./method-params.js";
import type { TelegramState } from "./state.js";

const CHAT_ACTIONS = new Set([
  "typing",
  "upload_photo",
  "record_video",
  "upload_video",
  "record_voice",
  "upload_voice",
  "upload_document",
  "choose_sticker",
  "find_location",
  "record_video_note",
  "upload_video_note",
]);

/** The setMyCommands handler: Telegram's limits on the menu (100 commands, lower-case names, described). */
function setMyCommands(state: TelegramState, p: Record<string, unknown>): unknown {
  const commands = jsonArg(p.commands, "commands");
  if (!Array.isArray(commands)) return bad('field "commands" must be an Array');
  if (commands.length > 100) return bad("too many commands specified");
  for (const c of commands as { command?: unknown; description?: unknown }[]) {
    const command = typeof c.command === "string" ? c.command.replace(/^\//, "") : "";
    if (!/^[a-z0-9_]{1,32}$/.test(command)) return bad("BOT_COMMAND_INVALID");
    if (typeof c.description !== "string" || c.description.length < 1 || c.description.length > 256) {
      return bad("command description must be non-empty");
    }
  }
  state.commands = commands;
  return true;
}

/** The getChatMember handler: a ChatMember of the member's status, with the fields Telegram sends for it. */
function getChatMember(state: TelegramState, p: Record<string, unknown>): unknown {
  const chatState = chatFromParam(state, p.chat_id);
  const userId = int(p.user_id);
  if (userId === undefined) return bad("user_id is empty");
  const member = state.members.get(`${chatState.chat.id}:${userId}`);
  // Telegram answers this for users it never saw in the chat.
  if (!member) return bad("PARTICIPANT_ID_INVALID");
  const user = apiUser(member.user);
  switch (member.status) {
    case "creator":
      return { status: "creator", user, is_anonymous: false };
    case "administrator":
      return {
        status: "administrator",
        user,
        can_be_edited: false,
        is_anonymous: false,
        can_manage_chat: true,
        can_delete_messages: true,
        can_manage_video_chats: true,
        can_restrict_members: true,
        can_promote_members: false,
        can_change_info: true,
        can_invite_users: true,
        can_post_stories: false,
        can_edit_stories: false,
        can_delete_stories: false,
      };
    case "restricted":
      return { status: "restricted", user, is_member: true, until_date: 0, can_send_messages: true };
    case "kicked":
      return { status: "kicked", user, until_date: 0 };
    default:
      return { status: member.status, user };
  }
}

/** The handlers about the bot, its chats, members, commands and callback queries. */
export function chatMemberCommandMethods(state: TelegramState): MethodTable {
  return {
    getme: () => ({
      ...apiUser(state.me),
      can_join_groups: true,
      can_read_all_group_messages: !state.privacyMode,
      supports_inline_queries: false,
      can_connect_to_business: false,
      has_main_web_app: false,
      has_topics_enabled: false,
      allows_users_to_create_topics: false,
      can_manage_bots: false,
      supports_join_request_queries: false,
    }),
    sendchataction(p) {
      const chatState = chatFromParam(state, p.chat_id);
      const action = str(p.action);
      if (!action || !CHAT_ACTIONS.has(action)) return bad("wrong parameter action in request");
      const threadId = int(p.message_thread_id);
      if (threadId !== undefined) checkThread(chatState, threadId);
      chatState.lastAction = { action, at: state.now(), ...(threadId !== undefined ? { threadId } : {}) };
      return true;
    },
    getchatmember: (p) => getChatMember(state, p),
    setmycommands: (p) => setMyCommands(state, p),
    getmycommands: () => state.commands,
    deletemycommands() {
      state.commands = [];
      return true;
    },
    answercallbackquery(p) {
      const id = str(p.callback_query_id) ?? "";
      const query = state.callbackQueries.get(id);
      if (!query || query.answered) return bad("query is too old and response timeout expired or query ID is invalid");
      query.answered = true;
      query.answer = {
        ...(str(p.text) !== undefined ? { text: str(p.text) } : {}),
        ...(p.show_alert !== undefined ? { show_alert: bool(p.show_alert) } : {}),
      };
      return true;
    },
  };
}
