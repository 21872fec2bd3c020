/**
 * REST routes of the fake about who and where: the gateway URL (and its session start limit), the
 * users (and opening a DM), the guild the bot is in, its members and its channels.
 */
import { ChannelType, type APIDMChannel, type ChannelFlags } from "discord.js";
import type { FakeGateway } from "./gateway.js";
import { guildCreate } from "./gateway-payloads.js";
import { apiError, formError, json } from "./http-answer.js";
import type { Route } from "./rest-route.js";
import type { DiscordState } from "./state.js";

/** GET /gateway(/bot), /users/..., POST /users/@me/channels, GET /channels/:id, /guilds/:id(/members/:id). */
export function gatewayUserGuildRoutes(
  state: DiscordState,
  gateway: FakeGateway,
  notInAnyGuild: boolean | undefined,
  sharding: { shards: number; maxConcurrency: number } = { shards: 1, maxConcurrency: 1 },
): Route[] {
  const { world, users, channels, members, nextId } = state;
  return [
    {
      method: "GET",
      pattern: /^\/gateway$/,
      route: "GET /gateway",
      auth: false,
      handle: () => json(200, { url: `ws://127.0.0.1:${state.port}` }),
    },
    {
      method: "GET",
      pattern: /^\/gateway\/bot$/,
      route: "GET /gateway/bot",
      auth: true,
      handle: () =>
        json(200, {
          url: `ws://127.0.0.1:${state.port}`,
          shards: sharding.shards,
          session_start_limit: {
            total: 1000,
            remaining: Math.max(0, 1000 - gateway.stats.identifies),
            reset_after: 14_400_000,
            max_concurrency: sharding.maxConcurrency,
          },
        }),
    },
    {
      method: "GET",
      pattern: /^\/users\/@me$/,
      route: "GET /users/@me",
      auth: true,
      handle: () => json(200, world.bot),
    },
    {
      method: "GET",
      pattern: /^\/users\/(\d+)$/,
      route: "GET /users/:id",
      auth: true,
      handle: ({ params }) => {
        const u = users.get(params[0]!);
        return u ? json(200, u) : apiError(404, 10013, "Unknown User");
      },
    },
    {
      method: "GET",
      pattern: /^\/users\/@me\/guilds$/,
      route: "GET /users/@me/guilds",
      auth: true,
      handle: () =>
        json(
          200,
          notInAnyGuild
            ? []
            : [
                {
                  id: world.guildId,
                  name: world.guildName,
                  icon: null,
                  banner: null,
                  owner: false,
                  permissions: "274877975552",
                  features: [],
                  approximate_member_count: 4,
                  approximate_presence_count: 2,
                },
              ],
        ),
    },
    {
      method: "POST",
      pattern: /^\/users\/@me\/channels$/,
      route: "POST /users/@me/channels",
      auth: true,
      handle: ({ body }) => {
        const recipient = users.get(String(body?.recipient_id ?? ""));
        if (!recipient) return formError("recipient_id", "BASE_TYPE_REQUIRED", "This field is required");
        const existing = [...channels.values()].find(
          (c): c is APIDMChannel =>
            c.type === ChannelType.DM && (c.recipients ?? []).some((r) => r.id === recipient.id),
        );
        if (existing) return json(200, existing);
        const dm: APIDMChannel = {
          id: nextId(),
          type: ChannelType.DM,
          last_message_id: null,
          recipients: [recipient],
          flags: 0 as ChannelFlags,
          name: null,
        };
        channels.set(dm.id, dm);
        return json(200, dm);
      },
    },
    {
      method: "GET",
      pattern: /^\/channels\/(\d+)$/,
      route: "GET /channels/:id",
      auth: true,
      handle: ({ params }) => {
        const c = channels.get(params[0]!);
        return c ? json(200, c) : apiError(404, 10003, "Unknown Channel");
      },
    },
    {
      method: "GET",
      pattern: /^\/guilds\/(\d+)$/,
      route: "GET /guilds/:id",
      auth: true,
      handle: ({ params }) => {
        if (params[0] !== world.guildId) return apiError(404, 10004, "Unknown Guild");
        const {
          channels: _c,
          threads: _t,
          members: _m,
          presences: _p,
          voice_states: _v,
          ...guild
        } = guildCreate(state);
        return json(200, guild);
      },
    },
    {
      method: "GET",
      pattern: /^\/guilds\/(\d+)\/members\/(\d+)$/,
      route: "GET /guilds/:id/members/:id",
      auth: true,
      handle: ({ params }) => {
        if (params[0] !== world.guildId) return apiError(404, 10004, "Unknown Guild");
        const m = members.get(params[1]!);
        return m ? json(200, m) : apiError(404, 10007, "Unknown Member");
      },
    },
  ];
}
