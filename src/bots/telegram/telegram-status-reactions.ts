/**
 * Status reactions on the user's Telegram message (STATUS_REACTIONS=on): 👀 queued, 👨‍💻 tools
 * running, 👌 answered, 😢 failed. Telegram takes only emoji from its list of allowed reactions (✅,
 * 🔧 and ⚠️, Discord's, are refused with REACTION_INVALID), and setMessageReaction replaces the bot's
 * reaction on the message, so one request per change. Reactions are not messages: they draw on no
 * message budget (no edit slot of the chat is spent); each chat's changes are spaced, and a 429's
 * retry_after is waited out, as the Discord port does with its reactions route.
 */
import type { ReactionTypeEmoji } from "grammy/types";
import type { ReplyPhase } from "../../contracts/reply-port.js";

/** An emoji Telegram accepts as a reaction (grammY types the allowed list: another one does not compile). */
export type TelegramReactionEmoji = ReactionTypeEmoji["emoji"];

/** The emoji of each phase; `queued` is the adapter's, the others the worker's. */
export const TELEGRAM_STATUS_EMOJI = {
  queued: "👀",
  tools: "👨‍💻",
  done: "👌",
  failed: "😢",
} as const satisfies Record<ReplyPhase | "queued", TelegramReactionEmoji>;

/** The reaction a phase shows. */
export function telegramReactionFor(phase: ReplyPhase): TelegramReactionEmoji {
  return TELEGRAM_STATUS_EMOJI[phase];
}

/**
 * Least time between two reaction changes in one chat. Telegram documents no figure for reactions;
 * one per second per chat is what it documents for messages, and a reaction's meaning survives the wait.
 */
export const TELEGRAM_REACTION_SPACING_MS = 1000;

/** The one place that spaces reaction changes per chat, and waits out a 429 (retry_after in ms). */
export function createReactionPacer(spacingMs = TELEGRAM_REACTION_SPACING_MS): {
  /** Marks a reaction another process set just now (the adapter's 👀), so the next change keeps its distance. */
  noteElsewhere(chatId: string): void;
  /** Runs `request` when the chat's spacing allows; on a RateLimited failure (`retryAfterMs`) waits and tries again (3 tries). */
  run(
    chatId: string,
    request: () => Promise<void>,
    retryAfterMs: (error: unknown) => number | undefined,
  ): Promise<void>;
} {
  const last = new Map<string, number>();
  return {
    noteElsewhere(chatId) {
      if (!last.has(chatId)) last.set(chatId, Date.now());
    },
    async run(chatId, request, retryAfterMs) {
      for (let attempt = 0; ; attempt += 1) {
        const wait = (last.get(chatId) ?? 0) + spacingMs - Date.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        const now = Date.now();
        // Chats long quiet are forgotten, so a worker that ran for months keeps no entry per chat it ever saw.
        if (last.size > 10_000) for (const [id, at] of last) if (at < now - spacingMs) last.delete(id);
        last.set(chatId, now);
        try {
          await request();
          return;
        } catch (error) {
          const retryAfter = retryAfterMs(error);
          if (retryAfter === undefined || attempt >= 2) throw error;
          last.set(chatId, Date.now() + retryAfter - spacingMs);
        }
      }
    },
  };
}
