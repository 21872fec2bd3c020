/** The settings commands in Telegram: a message with an inline keyboard, whose presses edit it in place. */
import { GrammyError, type Context } from "grammy";
import type { InlineKeyboardMarkup, Message } from "grammy/types";
import type { SettingsAnswer, SettingsAsker, SettingsCommand, SettingsPort } from "../../contracts/settings-port.js";
import type { ChatAdminCheck } from "./telegram-chat-admins.js";
import { telegramConversationKey, topicOf } from "./telegram-conversation.js";

/** The inline keyboard of an answer (none when it has no buttons). */
export function settingsKeyboard(answer: SettingsAnswer): InlineKeyboardMarkup | undefined {
  const rows = answer.buttons.filter((row) => row.length > 0);
  if (rows.length === 0) return undefined;
  return { inline_keyboard: rows.map((row) => row.map((b) => ({ text: b.label, callback_data: b.action }))) };
}

/** Telegram refuses texts over 4096 characters (UTF-16 units); a long tool list is cut rather than lost. */
function fitted(text: string): string {
  // Never end on half a surrogate pair.
  return text.length <= 4096 ? text : `${text.slice(0, 4095).replace(/[\uD800-\uDBFF]$/, "")}…`;
}

/** Who asks from a message or a press in a chat. */
function askerFor(
  chat: Message["chat"],
  topic: number | undefined,
  userId: number,
  isAdmin: ChatAdminCheck,
): SettingsAsker {
  return {
    platform: "telegram",
    conversationKey: telegramConversationKey(chat.id, topic),
    isPrivate: chat.type === "private",
    userId: String(userId),
    isChatAdmin: () => isAdmin(chat.id, userId),
  };
}

/** The Telegram side of the settings commands. */
export interface TelegramSettingsUi {
  /** Runs a typed command; returns the text and keyboard to send under the user's message. */
  command(
    message: Message,
    command: SettingsCommand,
    args: string,
  ): Promise<{ text: string; markup?: InlineKeyboardMarkup }>;
  /** Handles a press of a settings button; false when the data is not a settings action. */
  press(ctx: Context): Promise<boolean>;
}

/** Creates the UI over the settings port. */
export function createTelegramSettingsUi(opts: {
  settings: SettingsPort;
  isAdmin: ChatAdminCheck;
  /** Waits for the chat's shared edit budget (the message edit is a message write). */
  replySlot?: (chatId: string) => Promise<void>;
}): TelegramSettingsUi {
  return {
    async command(message, command, args) {
      const answer = await opts.settings.run(
        askerFor(message.chat, topicOf(message), message.from?.id ?? 0, opts.isAdmin),
        command,
        args,
      );
      const markup = settingsKeyboard(answer);
      return { text: fitted(answer.text), ...(markup ? { markup } : {}) };
    },
    async press(ctx) {
      const query = ctx.callbackQuery;
      const message = query?.message;
      if (!query?.data || !message || !("chat" in message)) return false;
      const topic = "is_topic_message" in message ? topicOf(message as Message) : undefined;
      const answer = await opts.settings.press(askerFor(message.chat, topic, query.from.id, opts.isAdmin), query.data);
      if (!answer) return false;
      await ctx.answerCallbackQuery(answer.notice ? { text: answer.notice } : {});
      // A refusal changes nothing: the menu stays as it is for those who may use it.
      if (answer.refused) return true;
      await opts.replySlot?.(String(message.chat.id));
      const markup = settingsKeyboard(answer);
      try {
        await ctx.api.editMessageText(
          message.chat.id,
          message.message_id,
          fitted(answer.text),
          markup ? { reply_markup: markup } : {},
        );
      } catch (err) {
        // Pressing the button of the state already shown changes nothing visible: that is fine.
        if (!(err instanceof GrammyError && /not modified/.test(err.description))) throw err;
      }
      return true;
    },
  };
}
