/**
 * Telegram's limits, the one place they are written: "avoid sending more than one message per
 * second" in a chat and "no more than 20 messages per minute" in a group (= one per 3 s
 * sustained), edits counting like messages, and "about 30 messages per second" over all chats
 * (Bot FAQ). 100 ms of margin absorbs request latency jitter, as vercel/chat does (1.1 s / 3.1 s).
 */
import type { GlobalBudget, PlatformPacing } from "../../contracts/platform-pacing.js";

/** Between two requests into a private chat. */
export const TELEGRAM_PRIVATE_EDIT_INTERVAL_MS = 1100;
/** Between two requests into a group (forum topics share their group's budget). */
export const TELEGRAM_GROUP_EDIT_INTERVAL_MS = 3100;
/**
 * Pacing of drafts in a private chat. sendMessageDraft is a preview that the client animates, not a
 * message: it is not subject to the per-chat message limit, and streaming it a few times a second is
 * what it is for. Kept at 250 ms so a word is on screen within ~0.3 s without flooding the API.
 */
export const TELEGRAM_DRAFT_INTERVAL_MS = 250;
/** Bot-wide messages per second. */
export const TELEGRAM_GLOBAL_PER_SECOND = 30;
const MESSAGES: GlobalBudget = { key: "telegram", perSecond: TELEGRAM_GLOBAL_PER_SECOND };

/** Group and supergroup ids are negative; a private chat's id is its user's (positive) id. */
export const isTelegramGroupId = (chatId: string): boolean => chatId.startsWith("-");

/** Telegram's pacing rules. */
export const telegramPacing: PlatformPacing = {
  intervalMs(chatId, lane) {
    // Drafts are previews with their own (short) pace; they never hold up the chat's messages.
    if (lane === "draft") return TELEGRAM_DRAFT_INTERVAL_MS;
    return isTelegramGroupId(chatId) ? TELEGRAM_GROUP_EDIT_INTERVAL_MS : TELEGRAM_PRIVATE_EDIT_INTERVAL_MS;
  },
  // Drafts are previews, not messages: Telegram documents no bot-wide figure for them, so they draw on none.
  globalBudget: (lane) => (lane === "draft" ? undefined : MESSAGES),
};
