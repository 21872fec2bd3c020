/**
 * The bot's own reactions over REST: PUT/DELETE /channels/:id/messages/:id/reactions/:emoji/@me,
 * with Discord's reaction bucket (1 per 0.25 s per channel, shared by PUT and DELETE) and its
 * answers (204; 10014 Unknown Emoji for an empty one; 10008 for a message that is gone).
 */
import { apiError, noContent } from "./http-answer.js";
import { channelBucket, type Route } from "./rest-route.js";
import type { DiscordState } from "./state.js";

/** One reaction change the bot made, in arrival order. */
export interface ReactionEvent {
  at: number;
  channelId: string;
  messageId: string;
  emoji: string;
  op: "add" | "remove";
}

const REACTION_BUCKET = { hash: "reactions0000000000000000000000000", limit: 1, windowMs: 250 };

/** The reaction routes; `log` records each accepted change, `current` the bot's reactions per message. */
export function reactionRoutes(state: DiscordState, log: ReactionEvent[], current: Map<string, Set<string>>): Route[] {
  const { channels, findMessage, now, changed } = state;
  const handle =
    (op: "add" | "remove") =>
    ({ params }: { params: string[] }) => {
      const [channelId, messageId, raw] = params as [string, string, string];
      if (!channels.has(channelId)) return apiError(404, 10003, "Unknown Channel");
      if (!findMessage(channelId, messageId)) return apiError(404, 10008, "Unknown Message");
      const emoji = decodeURIComponent(raw);
      if (emoji.trim() === "") return apiError(400, 10014, "Unknown Emoji");
      const set = current.get(messageId) ?? new Set<string>();
      if (op === "add") set.add(emoji);
      else set.delete(emoji);
      current.set(messageId, set);
      log.push({ at: now(), channelId, messageId, emoji, op });
      changed();
      return noContent();
    };
  return (["PUT", "DELETE"] as const).map((method) => ({
    method,
    pattern: /^\/channels\/(\d+)\/messages\/(\d+)\/reactions\/([^/]+)\/@me$/,
    route: `${method} /channels/:id/messages/:id/reactions/:emoji/@me`,
    auth: true,
    bucket: channelBucket(REACTION_BUCKET),
    handle: handle(method === "PUT" ? "add" : "remove"),
  }));
}
