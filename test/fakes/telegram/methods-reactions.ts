/**
 * setMessageReaction as the real server answers a bot: the reactions replace the bot's previous
 * ones on that message (an empty list takes them away), a bot may set one, and only emoji from
 * Telegram's list of allowed reactions are accepted; anything else (✅, 🔧, ⚠️ …) is a 400
 * REACTION_INVALID. Reactions are not messages: they count against none of the flood limits.
 */
import type { FakeTelegram } from "../telegram-server.js";
import type { MethodTable } from "./method-dispatch.js";
import { bad } from "./method-outcomes.js";
import { chatFromParam, int, jsonArg } from "./method-params.js";
import type { TelegramState } from "./state.js";

/** The emoji a ReactionTypeEmoji may carry (Bot API, "ReactionTypeEmoji"). */
export const TELEGRAM_REACTION_EMOJI: ReadonlySet<string> = new Set([
  ..."👍 👎 ❤ 🔥 🥰 👏 😁 🤔 🤯 😱 🤬 😢 🎉 🤩 🤮 💩 🙏 👌 🕊 🤡 🥱 🥴 😍 🐳 ❤‍🔥 🌚 🌭 💯 🤣 ⚡ 🍌 🏆 💔 🤨 😐 🍓 🍾 💋 🖕 😈 😴 😭 🤓 👻 👨‍💻 👀 🎃 🙈 😇 😨 🤝 ✍ 🤗 🫡 🎅 🎄 ☃ 💅 🤪 🗿 🆒 💘 🙉 🦄 😘 💊 🙊 😎 👾 🤷‍♂ 🤷 🤷‍♀ 😡".split(
    " ",
  ),
]);

/** One reaction change the bot made. */
export interface ReactionChange {
  at: number;
  chatId: number;
  messageId: number;
  /** The bot's reactions on the message after the change. */
  emoji: string[];
}

/** The method and what tests read of it. */
export function createReactions(state: TelegramState): {
  methods: MethodTable;
  inspection: Pick<FakeTelegram, "botReactions" | "reactionLog">;
} {
  const current = new Map<string, string[]>();
  const log: ReactionChange[] = [];
  const keyOf = (chatId: number, messageId: number) => `${chatId}:${messageId}`;
  return {
    methods: {
      setmessagereaction(p) {
        const chatState = chatFromParam(state, p.chat_id);
        const messageId = int(p.message_id);
        const message = messageId === undefined ? undefined : chatState.messages.get(messageId);
        if (!message || message.deleted || messageId === undefined) return bad("message to react not found");
        const raw = p.reaction === undefined ? [] : jsonArg(p.reaction, "reaction");
        if (!Array.isArray(raw)) return bad("can't parse reaction types JSON object");
        const emoji: string[] = [];
        for (const r of raw as { type?: unknown; emoji?: unknown }[]) {
          if (r?.type !== "emoji" || typeof r.emoji !== "string" || !TELEGRAM_REACTION_EMOJI.has(r.emoji))
            return bad("REACTION_INVALID");
          emoji.push(r.emoji);
        }
        // A bot sets at most one reaction on a message (like a user without Premium).
        if (emoji.length > 1) return bad("REACTIONS_TOO_MANY");
        current.set(keyOf(chatState.chat.id, messageId), emoji);
        log.push({ at: state.now(), chatId: chatState.chat.id, messageId, emoji });
        return true;
      },
    },
    inspection: {
      botReactions: (chatId, messageId) => [...(current.get(keyOf(chatId, messageId)) ?? [])],
      reactionLog: () => [...log],
    },
  };
}
