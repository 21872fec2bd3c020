/**
 * Telegram's limits (Bot FAQ), the one place they are written: one message a second in a chat, 20 a minute
 * in a group, edits counting like messages, about 30 a second over all chats. +100 ms absorbs latency jitter.
 */
import type { GlobalBudget, PlatformPacing } from "../../contracts/platform-pacing.js";

/** Between two requests into a private chat. */
export const TELEGRAM_PRIVATE_EDIT_INTERVAL_MS = 1100;
/** Between two requests into a group (forum topics share their group's budget). */
export const TELEGRAM_GROUP_EDIT_INTERVAL_MS = 3100;
/** Drafts are previews the client animates, not messages: no per-chat limit; 250 ms shows a word within ~0.3 s. */
export const TELEGRAM_DRAFT_INTERVAL_MS = 250;
/** Bot-wide messages per second. */
export const TELEGRAM_GLOBAL_PER_SECOND = 30;
const MESSAGES: GlobalBudget = { key: "telegram", perSecond: TELEGRAM_GLOBAL_PER_SECOND };

/** Group and supergroup ids are negative; a private chat's id is its user's (positive) id. */
const isTelegramGroupId = (chatId: string): boolean => chatId.startsWith("-");

/** Telegram's pacing rules. */
export const telegramPacing: PlatformPacing = {
  intervalMs(chatId, lane) {
    if (lane === "draft") return TELEGRAM_DRAFT_INTERVAL_MS;
    return isTelegramGroupId(chatId) ? TELEGRAM_GROUP_EDIT_INTERVAL_MS : TELEGRAM_PRIVATE_EDIT_INTERVAL_MS;
  },
  // Drafts are previews, not messages: Telegram documents no bot-wide figure for them, so they draw on none.
  globalBudget: (lane) => (lane === "draft" ? undefined : MESSAGES),
};
