/**
 * The world the fake Discord serves: a bot, a few people, one guild with text channels,
 * a thread and a managed bot role, and a DM channel. Objects are typed with
 * discord-api-types (re-exported by discord.js), so a missing field is a compile error,
 * not a surprise in the real client.
 */
import {
  ChannelType,
  GuildDefaultMessageNotifications,
  GuildExplicitContentFilter,
  GuildMFALevel,
  GuildNSFWLevel,
  GuildPremiumTier,
  type GuildSystemChannelFlags,
  GuildVerificationLevel,
  Locale,
  ThreadAutoArchiveDuration,
  type APIDMChannel,
  type ChannelFlags,
  type GuildMemberFlags,
  type RoleFlags,
  type UserFlags,
  type APIGuildMember,
  type APIPublicThreadChannel,
  type APIRole,
  type APITextChannel,
  type APIUser,
} from "discord.js";

/** Discord's epoch (2015-01-01T00:00:00Z): snowflakes count milliseconds from it. */
export const DISCORD_EPOCH_MS = 1_420_070_400_000;

/** A snowflake for a moment and a per-millisecond increment, as Discord builds them. */
export function snowflakeAt(ms: number, increment = 0): string {
  return ((BigInt(ms - DISCORD_EPOCH_MS) << 22n) | BigInt(increment & 0xfff)).toString();
}

/** Monotonic snowflake source (unique even when many ids are made in one millisecond). */
export function createSnowflakes(now: () => number): () => string {
  let lastMs = 0;
  let increment = 0;
  return () => {
    const ms = Math.max(now(), lastMs);
    increment = ms === lastMs ? increment + 1 : 0;
    lastMs = ms;
    // More than 4096 ids in one millisecond: borrow the next millisecond instead of wrapping.
    if (increment > 0xfff) {
      lastMs += 1;
      increment = 0;
    }
    return snowflakeAt(lastMs, increment);
  };
}

// Fixture ids are fixed so tests and logs are readable; they are valid snowflakes from 2023.
const base = Date.UTC(2023, 0, 1);
const id = (n: number): string => snowflakeAt(base + n * 1000, n);

/** Privileged intents a bot can have switched on in the developer portal. */
export type PrivilegedIntent = "GuildMembers" | "GuildPresences" | "MessageContent";

/** Everything the fake knows at start; tests read ids from here. */
export interface FakeDiscordWorld {
  bot: APIUser;
  applicationId: string;
  users: { alice: APIUser; bob: APIUser; carol: APIUser; otherBot: APIUser };
  guildId: string;
  guildName: string;
  roles: { everyone: APIRole; moderators: APIRole; botRole: APIRole };
  members: APIGuildMember[];
  channels: { general: APITextChannel; random: APITextChannel; thread: APIPublicThreadChannel; dm: APIDMChannel };
  /** More guilds the bot is in (`withOtherGuilds`), each with one text channel; same people, no roles. */
  otherGuilds?: { id: string; name: string; general: APITextChannel }[];
}

/**
 * The world plus `count` more guilds. Their ids follow the main guild's by a millisecond each, so
 * with any shard count N guild k lands on shard (main + k) % N: three more cover all four of 4 shards.
 */
export function withOtherGuilds(world: FakeDiscordWorld, count: number): FakeDiscordWorld {
  if (count === 0) return world;
  const mainMs = Number(BigInt(world.guildId) >> 22n) + DISCORD_EPOCH_MS;
  const otherGuilds = Array.from({ length: count }, (_, i) => {
    const guildId = snowflakeAt(mainMs + i + 1);
    return {
      id: guildId,
      name: `Other Guild ${i + 1}`,
      general: textChannel(snowflakeAt(mainMs + 500 + i), guildId, "general", 0),
    };
  });
  return { ...world, otherGuilds };
}

function user(userId: string, username: string, globalName: string | null, bot = false): APIUser {
  return {
    id: userId,
    username,
    discriminator: "0",
    global_name: globalName,
    avatar: null,
    ...(bot ? { bot: true } : {}),
    public_flags: 0 as UserFlags,
    flags: 0 as UserFlags,
    banner: null,
    accent_color: null,
    avatar_decoration_data: null,
  };
}

function role(
  roleId: string,
  name: string,
  position: number,
  permissions: string,
  extra: Partial<APIRole> = {},
): APIRole {
  return {
    id: roleId,
    name,
    color: 0,
    colors: { primary_color: 0, secondary_color: null, tertiary_color: null },
    hoist: false,
    icon: null,
    unicode_emoji: null,
    position,
    permissions,
    managed: false,
    mentionable: false,
    flags: 0 as RoleFlags,
    ...extra,
  };
}

function member(u: APIUser, roles: string[], nick: string | null = null): APIGuildMember {
  return {
    user: u,
    nick,
    avatar: null,
    banner: null,
    roles,
    joined_at: new Date(base).toISOString(),
    premium_since: null,
    deaf: false,
    mute: false,
    flags: 0 as GuildMemberFlags,
    pending: false,
    communication_disabled_until: null,
  };
}

function textChannel(channelId: string, guildId: string, name: string, position: number): APITextChannel {
  return {
    id: channelId,
    type: ChannelType.GuildText,
    guild_id: guildId,
    name,
    position,
    permission_overwrites: [],
    parent_id: null,
    topic: null,
    nsfw: false,
    last_message_id: null,
    rate_limit_per_user: 0,
    default_auto_archive_duration: ThreadAutoArchiveDuration.OneDay,
    flags: 0 as ChannelFlags,
  };
}

/** The default world: bot "TestBot", Alice, Bob (nickname "Bobby" in the guild), Carol, OtherBot. */
export function createDefaultWorld(): FakeDiscordWorld {
  const guildId = id(1);
  const bot = user(id(2), "testbot", null, true);
  const alice = user(id(3), "alice", "Alice");
  const bob = user(id(4), "bob", "Bob B.");
  const carol = user(id(5), "carol", null);
  const otherBot = user(id(6), "otherbot", "OtherBot", true);
  // @everyone's id is the guild's id, as on Discord. 1024|2048|65536 = view, send, read history.
  const everyone = role(guildId, "@everyone", 0, String(1024 + 2048 + 65536 + 64 + 16384 + 32768));
  const moderators = role(id(7), "Moderators", 1, "8", { mentionable: true });
  const botRole = role(id(8), "TestBot", 2, String(1024 + 2048 + 65536 + 16384 + 274877906944), {
    managed: true,
    tags: { bot_id: bot.id },
  });
  const general = textChannel(id(10), guildId, "general", 0);
  const random = textChannel(id(11), guildId, "random", 1);
  const thread: APIPublicThreadChannel = {
    id: id(12),
    type: ChannelType.PublicThread,
    guild_id: guildId,
    parent_id: general.id,
    owner_id: alice.id,
    name: "help-thread",
    last_message_id: null,
    rate_limit_per_user: 0,
    message_count: 0,
    member_count: 2,
    total_message_sent: 0,
    flags: 0 as ChannelFlags,
    thread_metadata: {
      archived: false,
      auto_archive_duration: ThreadAutoArchiveDuration.OneDay,
      archive_timestamp: new Date(base).toISOString(),
      locked: false,
      create_timestamp: new Date(base).toISOString(),
    },
  };
  const dm: APIDMChannel = {
    id: id(13),
    type: ChannelType.DM,
    last_message_id: null,
    recipients: [alice],
    flags: 0 as ChannelFlags,
    name: null,
  };
  return {
    bot,
    applicationId: bot.id,
    users: { alice, bob, carol, otherBot },
    guildId,
    guildName: "Test Guild",
    roles: { everyone, moderators, botRole },
    members: [
      member(bot, [botRole.id]),
      member(alice, []),
      member(bob, [moderators.id], "Bobby"),
      member(carol, []),
      member(otherBot, []),
    ],
    channels: { general, random, thread, dm },
  };
}

/** The parts of a GUILD_CREATE that do not change while the fake runs. */
export const staticGuildFields = {
  icon: null,
  splash: null,
  discovery_splash: null,
  banner: null,
  description: null,
  owner_id: "",
  afk_channel_id: null,
  afk_timeout: 300 as const,
  verification_level: GuildVerificationLevel.None,
  default_message_notifications: GuildDefaultMessageNotifications.OnlyMentions,
  explicit_content_filter: GuildExplicitContentFilter.Disabled,
  emojis: [],
  features: [],
  mfa_level: GuildMFALevel.None,
  application_id: null,
  system_channel_id: null,
  system_channel_flags: 0 as GuildSystemChannelFlags,
  rules_channel_id: null,
  vanity_url_code: null,
  premium_tier: GuildPremiumTier.None,
  premium_subscription_count: 0,
  preferred_locale: Locale.EnglishUS,
  public_updates_channel_id: null,
  nsfw_level: GuildNSFWLevel.Default,
  stickers: [],
  premium_progress_bar_enabled: false,
  hub_type: null,
  safety_alerts_channel_id: null,
  incidents_data: null,
  max_members: 500_000,
  max_video_channel_users: 25,
  max_stage_video_channel_users: 50,
  nsfw: false,
  region: "deprecated",
  widget_enabled: false,
  widget_channel_id: null,
};
