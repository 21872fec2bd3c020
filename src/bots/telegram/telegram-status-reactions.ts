/**
 * Status reactions on the user's message (STATUS_REACTIONS=on). Telegram takes only emoji from its allowed
 * list (Discord's ✅ 🔧 ⚠️ are refused with REACTION_INVALID), and setMessageReaction replaces the bot's
 * reaction, so one request per change. Reactions spend no message budget, but each chat's changes are spaced.
 */
import type { ReactionTypeEmoji } from "grammy/types";
import type { ReplyPhase } from "../../contracts/reply-port.js";

/** The emoji of each phase; `queued` is the adapter's, the others the worker's (grammY types the allowed list). */
export const TELEGRAM_STATUS_EMOJI = {
  queued: "👀",
  tools: "👨‍💻",
  done: "👌",
  failed: "😢",
} as const satisfies Record<ReplyPhase | "queued", ReactionTypeEmoji["emoji"]>;

/** Telegram documents no figure for reactions: one change a second per chat, as for messages. */
const SPACING_MS = 1000;

/** The one place that spaces reaction changes per chat, and waits out a 429 (retry_after in ms). */
export function createReactionPacer(): {
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
        const wait = (last.get(chatId) ?? 0) + SPACING_MS - Date.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        const now = Date.now();
        // Chats long quiet are forgotten, so a worker that ran for months keeps no entry per chat it ever saw.
        if (last.size > 10_000) for (const [id, at] of last) if (at < now - SPACING_MS) last.delete(id);
        last.set(chatId, now);
        try {
          await request();
          return;
        } catch (error) {
          const retryAfter = retryAfterMs(error);
          if (retryAfter === undefined || attempt >= 2) throw error;
          last.set(chatId, Date.now() + retryAfter - SPACING_MS);
        }
      }
    },
  };
}
