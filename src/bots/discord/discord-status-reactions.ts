/**
 * Status reactions on the user's message (STATUS_REACTIONS=on), each replacing the one before. The reactions
 * route has its own bucket, so they never take one of the channel's message slots.
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
  const { queued, tools } = STATUS_EMOJI;
  return { add: STATUS_EMOJI[phase], remove: phase === "tools" ? [queued] : [queued, tools] };
}
