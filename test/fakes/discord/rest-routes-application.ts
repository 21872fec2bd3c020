/**
 * GET /applications/@me: the bot's application, whose flags say which privileged intents are
 * switched on in the developer portal (what a startup check reads before the gateway refuses them).
 */
import type { PrivilegedIntent } from "../discord-fixtures.js";
import { json } from "./http-answer.js";
import type { Route } from "./rest-route.js";
import type { DiscordState } from "./state.js";

/** GET /applications/@me `flags` for the privileged intents switched on (an unverified bot gets the _LIMITED bits). */
const LIMITED_INTENT_FLAGS: Record<PrivilegedIntent, number> = {
  GuildPresences: 1 << 13,
  GuildMembers: 1 << 15,
  MessageContent: 1 << 19,
};

/** The application route. */
export function applicationRoutes({ world, privileged }: DiscordState): Route[] {
  return [
    {
      method: "GET",
      pattern: /^\/applications\/@me$/,
      route: "GET /applications/@me",
      auth: true,
      handle: () =>
        json(200, {
          id: world.applicationId,
          name: world.bot.username,
          icon: null,
          description: "",
          summary: "",
          type: null,
          bot: world.bot,
          bot_public: true,
          bot_require_code_grant: false,
          verify_key: "0".repeat(64),
          // APPLICATION_COMMAND_BADGE plus one bit per privileged intent enabled in the portal.
          flags: [...privileged].reduce((flags, intent) => flags | LIMITED_INTENT_FLAGS[intent], 1 << 23),
          team: null,
          owner: world.users.alice,
          approximate_guild_count: 1,
          redirect_uris: [],
          interactions_endpoint_url: null,
          tags: [],
        }),
    },
  ];
}
