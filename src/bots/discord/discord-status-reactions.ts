/**
 * Status reactions on the user's message (STATUS_REACTIONS=on): 👀 queued, 🔧 tools running,
 * ✅ answered, ⚠️ failed, each replacing the one before. They go through the same REST client as
 * the reply (@discordjs/rest keeps the reactions route's own bucket, 1 per 0.25 s per channel, and
 * waits out a 429), so they never take one of the channel's message slots.
 */
import type { ReplyPhase } from "../../contracts/reply-port.js";

/** The emoji of each phase; `queued` is the adapter's, the others the worker's. */
export const STATUS_EMOJI = { queued: "👀", tools: "🔧", done: "✅", failed: "⚠️" } as const;

/** The reactions route of the bot's own reaction on a message. */
export function ownReactionPath(channelId: string, messageId: string, emoji: string): `/${string}` {
  return `/channels/${channelId}/messages/${messageId}/reactions/${encodeURIComponent(emoji)}/@me`;
}

/** What a phase change does: the reaction to add, then the ones to take away (those it replaces). */
export function reactionChange(phase: ReplyPhase): { add: string; remove: string[] } {
  switch (phase) {
    case "tools":
      return { add: STATUS_EMOJI.tools, remove: [STATUS_EMOJI.queued] };
    case "done":
      return { add: STATUS_EMOJI.done, remove: [STATUS_EMOJI.queued, STATUS_EMOJI.tools] };
    case "failed":
      return { add: STATUS_EMOJI.failed, remove: [STATUS_EMOJI.queued, STATUS_EMOJI.tools] };
  }
}
