/**
 * Threads over REST: POST /channels/:id/messages/:id/threads starts a public thread on a message,
 * as Discord does (the thread's id is the message's, its owner the bot, a name of 1-100 characters,
 * one thread per message), and announces it on the gateway with THREAD_CREATE.
 */
import { ChannelType, ThreadAutoArchiveDuration, type APIChannel, type APIPublicThreadChannel } from "discord.js";
import type { FakeGateway } from "./gateway.js";
import { apiError, formError, json } from "./http-answer.js";
import type { MessageBucketRules, Route } from "./rest-route.js";
import { guildOf, type DiscordState } from "./state.js";

/** The thread routes; `threadsStarted` lists the threads the bot started, oldest first. */
export function threadRoutes(
  state: DiscordState,
  gateway: FakeGateway,
  rules: MessageBucketRules,
  threadsStarted: string[],
): Route[] {
  const { channels, findMessage, world, now } = state;
  return [
    {
      method: "POST",
      pattern: /^\/channels\/(\d+)\/messages\/(\d+)\/threads$/,
      route: "POST /channels/:id/messages/:id/threads",
      auth: true,
      bucket: (p) => [rules.fallback("POST /channels/:id/messages/:id/threads"), p[0] ?? ""],
      handle: ({ params, body }) => {
        const parent = channels.get(params[0]!);
        if (!parent) return apiError(404, 10003, "Unknown Channel");
        if (parent.type !== ChannelType.GuildText)
          return apiError(400, 50024, "Cannot execute action on this channel type");
        if (!findMessage(params[0]!, params[1]!)) return apiError(404, 10008, "Unknown Message");
        if (channels.has(params[1]!))
          return apiError(400, 160004, "A thread has already been created for this message");
        const name = typeof body?.name === "string" ? body.name : "";
        if (name.length < 1 || name.length > 100)
          return formError("name", "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 100 in length.");
        const at = new Date(now()).toISOString();
        const thread: APIPublicThreadChannel = {
          id: params[1]!,
          type: ChannelType.PublicThread,
          guild_id: guildOf(parent)!,
          parent_id: parent.id,
          owner_id: world.bot.id,
          name,
          last_message_id: null,
          rate_limit_per_user: 0,
          message_count: 0,
          member_count: 1,
          total_message_sent: 0,
          flags: 0 as APIPublicThreadChannel["flags"],
          thread_metadata: {
            archived: false,
            auto_archive_duration: ThreadAutoArchiveDuration.OneDay,
            archive_timestamp: at,
            locked: false,
            create_timestamp: at,
          },
        };
        channels.set(thread.id, thread as APIChannel);
        threadsStarted.push(thread.id);
        gateway.dispatch("THREAD_CREATE", () => ({ ...thread, newly_created: true }));
        return json(201, thread);
      },
    },
  ];
}
