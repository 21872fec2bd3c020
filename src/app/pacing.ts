/**
 * Platform limits as the rate gate needs them: how far apart requests into one
 * chat must be, and which bot-wide budget a chat draws on, for a pacing key
 * (`<platform>:<chatId>`, see worker/user-message.ts, or a chat's draft key
 * `<platform>:<chatId>:draft`, see reply/rate-gate.ts).
 */
import type { DiscordReplyPortFactory } from "../adapters/discord/discord-reply-port.js";
import { DRAFT_KEY_SUFFIX } from "../reply/rate-gate.js";
import type { GlobalBudget } from "../reply/redis-rate-gate.js";
import { TELEGRAM_DRAFT_INTERVAL_MS } from "../adapters/telegram/telegram-reply-port.js";

/** Telegram: ~1 message/s per chat, 20/min in groups (3 s apart keeps inside both); Discord: learned from headers. */
export const TELEGRAM_PRIVATE_INTERVAL_MS = 1100;
export const TELEGRAM_GROUP_INTERVAL_MS = 3100;
export const DISCORD_DEFAULT_INTERVAL_MS = 1000;
export { TELEGRAM_DRAFT_INTERVAL_MS };

/** The interval function for the rate gate. */
export function pacingIntervalFor(discord?: Pick<DiscordReplyPortFactory, "observedIntervalMs">): (chatKey: string) => number {
  return (chatKey) => {
    const at = chatKey.indexOf(":");
    const platform = chatKey.slice(0, at);
    const chatId = chatKey.slice(at + 1);
    switch (platform) {
      case "telegram":
        // Drafts are previews with their own (short) pace; they never hold up the chat's messages.
        if (chatKey.endsWith(DRAFT_KEY_SUFFIX)) return TELEGRAM_DRAFT_INTERVAL_MS;
        // Group and supergroup ids are negative; private chats are the user's (positive) id.
        return chatId.startsWith("-") ? TELEGRAM_GROUP_INTERVAL_MS : TELEGRAM_PRIVATE_INTERVAL_MS;
      case "discord":
        return discord?.observedIntervalMs(chatId) ?? DISCORD_DEFAULT_INTERVAL_MS;
      default:
        return 0;
    }
  };
}

/** Telegram: "about 30 messages per second" over all chats (bot FAQ). */
export const TELEGRAM_GLOBAL_PER_SECOND = 30;
/**
 * Telegram drafts: not messages, so not in the 30/s above (finals keep all of it). Telegram documents no
 * figure for sendMessageDraft; this bounds the bot's preview traffic (the gate lets intermediates use
 * 60% of it) at about 30 chats streaming at full draft pace, slower pace beyond that.
 */
export const TELEGRAM_DRAFT_GLOBAL_PER_SECOND = 200;
/** Discord: 50 requests per second per bot (global rate limit). */
export const DISCORD_GLOBAL_PER_SECOND = 50;

/** The bot-wide budget of a pacing key: one per platform (and one for Telegram's drafts), shared by every chat and worker process. */
export function pacingGlobalFor(chatKey: string): GlobalBudget | undefined {
  const platform = chatKey.slice(0, chatKey.indexOf(":"));
  switch (platform) {
    case "telegram":
      if (chatKey.endsWith(DRAFT_KEY_SUFFIX)) return { key: "telegram-draft", perSecond: TELEGRAM_DRAFT_GLOBAL_PER_SECOND };
      return { key: "telegram", perSecond: TELEGRAM_GLOBAL_PER_SECOND };
    case "discord":
      return { key: "discord", perSecond: DISCORD_GLOBAL_PER_SECOND };
    default:
      return undefined;
  }
}
