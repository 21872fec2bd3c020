/**
 * What the fake's gateway sends: READY and GUILD_CREATE built from the world, and each message
 * event as one session may see it (its intents decide whether it gets the event at all, and
 * whether the content is visible, as Discord hides content without the MessageContent intent).
 */
import {
  ChannelType,
  type APIGuildMember,
  type APIMessage,
  type GatewayGuildCreateDispatchData,
  type GatewayReadyDispatchData,
} from "discord.js";
import { staticGuildFields } from "../discord-fixtures.js";
import type { FakeGatewaySession } from "./gateway.js";
import { userWithMember } from "./mentions.js";
import { guildOf, type DiscordState } from "./state.js";

/** Every guild the bot is in: the main one, then the others (`withOtherGuilds`). */
export const guildIdsOf = ({ world }: Pick<DiscordState, "world">): string[] => [
  world.guildId,
  ...(world.otherGuilds ?? []).map((g) => g.id),
];

/**
 * A guild as GUILD_CREATE carries it (GET /guilds/:id answers the same minus the lists); by default the
 * main one. The other guilds have only their @everyone role, and the same people without roles.
 */
export const guildCreate = (
  { channels, world, roles, members, now }: DiscordState,
  guildId: string = world.guildId,
): GatewayGuildCreateDispatchData => {
  const main = guildId === world.guildId;
  const other = world.otherGuilds?.find((g) => g.id === guildId);
  const guildChannels = [...channels.values()].filter((c) => guildOf(c) === guildId);
  return {
    ...staticGuildFields,
    id: guildId,
    name: main ? world.guildName : (other?.name ?? guildId),
    owner_id: world.users.alice.id,
    roles: main ? [...roles.values()] : [{ ...world.roles.everyone, id: guildId }],
    channels: guildChannels.filter(
      (c) => c.type !== ChannelType.PublicThread && c.type !== ChannelType.PrivateThread,
    ) as GatewayGuildCreateDispatchData["channels"],
    threads: guildChannels.filter(
      (c) => c.type === ChannelType.PublicThread || c.type === ChannelType.PrivateThread,
    ) as GatewayGuildCreateDispatchData["threads"],
    members: main ? [...members.values()] : [...members.values()].map((m) => ({ ...m, roles: [] })),
    member_count: members.size,
    presences: [],
    voice_states: [],
    stage_instances: [],
    guild_scheduled_events: [],
    soundboard_sounds: [],
    joined_at: new Date(now()).toISOString(),
    large: false,
    unavailable: false,
    max_presences: null,
    max_members: 500_000,
    approximate_member_count: members.size,
    premium_subscription_count: 0,
  } satisfies GatewayGuildCreateDispatchData;
};

/** READY for a new session: the bot, its one guild (unavailable until GUILD_CREATE) and where to resume. */
export const readyData = (
  { world, port }: DiscordState,
  sessionId: string,
  shard: [number, number],
): GatewayReadyDispatchData => ({
  v: 10,
  user: { ...world.bot, verified: true, mfa_enabled: false, email: null },
  guilds: guildIdsOf({ world }).map((id) => ({ id, unavailable: true })),
  session_id: sessionId,
  resume_gateway_url: `ws://127.0.0.1:${port}/resume-gateway`,
  shard,
  application: { id: world.applicationId, flags: 1 << 23, flags_new: String(1 << 23) },
});

export const INTENT_GUILD_MESSAGES = 1 << 9;
export const INTENT_DIRECT_MESSAGES = 1 << 12;
const INTENT_MESSAGE_CONTENT = 1 << 15;
/** The MESSAGE_CREATE/UPDATE payload a session gets, or undefined if its intents exclude it. */
export const messageEventFor = (state: DiscordState, session: FakeGatewaySession, message: APIMessage): unknown => {
  const { channels, world, members } = state;
  const channel = channels.get(message.channel_id);
  if (!channel) return undefined;
  const guildId = guildOf(channel);
  const needed = guildId ? INTENT_GUILD_MESSAGES : INTENT_DIRECT_MESSAGES;
  if ((session.intents & needed) === 0) return undefined;
  const inGuild = guildId !== undefined;
  const mentionsBot = message.mentions.some((u) => u.id === world.bot.id);
  const contentVisible =
    (session.intents & INTENT_MESSAGE_CONTENT) !== 0 || !inGuild || mentionsBot || message.author.id === world.bot.id;
  const member = inGuild ? members.get(message.author.id) : undefined;
  // The roles are the main guild's: in another guild the same person has none.
  const authorMember = member && guildId !== world.guildId ? { ...member, roles: [] } : member;
  const { user: _u, ...memberNoUser } = authorMember ?? ({} as APIGuildMember);
  return {
    ...message,
    ...(contentVisible ? {} : { content: "", embeds: [], attachments: [], components: [] }),
    mentions: message.mentions.map((u) => userWithMember(state, u.id, inGuild)),
    ...(guildId ? { guild_id: guildId } : {}),
    ...(authorMember && !message.webhook_id ? { member: memberNoUser } : {}),
    channel_type: channel.type,
  };
};
