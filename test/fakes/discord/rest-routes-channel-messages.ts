/**
 * A channel's messages over REST: reading them (newest first, paged by before/after), sending,
 * editing and deleting the bot's own, and the typing indicator, each counted against its bucket.
 */
import { apiError, json, noContent } from "./http-answer.js";
import type { MessageWriter } from "./message-writer.js";
import { channelBucket, type MessageBucketRules, type Route } from "./rest-route.js";
import type { DiscordState } from "./state.js";

/** GET/POST /channels/:id/messages, GET/PATCH/DELETE /channels/:id/messages/:id, POST /channels/:id/typing. */
export function channelMessageRoutes(
  state: DiscordState,
  { createBotMessage, editBotMessage, removeMessage }: MessageWriter,
  rules: MessageBucketRules,
): Route[] {
  const { channels, messagesIn, findMessage, world, denied, typing, now } = state;
  return [
    {
      method: "GET",
      pattern: /^\/channels\/(\d+)\/messages$/,
      route: "GET /channels/:id/messages",
      auth: true,
      bucket: (p) => [rules.fallback("GET /channels/:id/messages"), p[0] ?? ""],
      handle: ({ params, query }) => {
        if (!channels.has(params[0]!)) return apiError(404, 10003, "Unknown Channel");
        const limit = Math.min(100, Math.max(1, Number(query.get("limit") ?? 50) || 50));
        let list = [...messagesIn(params[0]!)].reverse();
        const before = query.get("before");
        const after = query.get("after");
        if (before) list = list.filter((m) => BigInt(m.id) < BigInt(before));
        if (after) list = list.filter((m) => BigInt(m.id) > BigInt(after));
        return json(200, list.slice(0, limit));
      },
    },
    {
      method: "GET",
      pattern: /^\/channels\/(\d+)\/messages\/(\d+)$/,
      route: "GET /channels/:id/messages/:id",
      auth: true,
      bucket: (p) => [rules.fallback("GET /channels/:id/messages/:id"), p[0] ?? ""],
      handle: ({ params }) => {
        if (!channels.has(params[0]!)) return apiError(404, 10003, "Unknown Channel");
        const m = findMessage(params[0]!, params[1]!);
        return m ? json(200, m) : apiError(404, 10008, "Unknown Message");
      },
    },
    {
      method: "POST",
      pattern: /^\/channels\/(\d+)\/messages$/,
      route: "POST /channels/:id/messages",
      auth: true,
      bucket: channelBucket(rules.write),
      handle: ({ params, body, files }) => createBotMessage(params[0]!, body ?? {}, {}, files),
    },
    {
      method: "PATCH",
      pattern: /^\/channels\/(\d+)\/messages\/(\d+)$/,
      route: "PATCH /channels/:id/messages/:id",
      auth: true,
      bucket: channelBucket(rules.write),
      handle: ({ params, body }) => editBotMessage(params[0]!, params[1]!, body ?? {}),
    },
    {
      method: "DELETE",
      pattern: /^\/channels\/(\d+)\/messages\/(\d+)$/,
      route: "DELETE /channels/:id/messages/:id",
      auth: true,
      bucket: (p) => [rules.fallback("DELETE /channels/:id/messages/:id"), p[0] ?? ""],
      handle: ({ params }) => {
        if (!channels.has(params[0]!)) return apiError(404, 10003, "Unknown Channel");
        const m = findMessage(params[0]!, params[1]!);
        if (!m) return apiError(404, 10008, "Unknown Message");
        if (m.author.id !== world.bot.id) return apiError(403, 50013, "Missing Permissions");
        removeMessage(params[0]!, params[1]!);
        return noContent();
      },
    },
    {
      method: "POST",
      pattern: /^\/channels\/(\d+)\/typing$/,
      route: "POST /channels/:id/typing",
      auth: true,
      bucket: channelBucket(rules.typing),
      handle: ({ params }) => {
        if (!channels.has(params[0]!)) return apiError(404, 10003, "Unknown Channel");
        if (denied.has(params[0]!)) return apiError(403, 50013, "Missing Permissions");
        typing.push({ at: now(), channelId: params[0]! });
        return noContent();
      },
    },
  ];
}
