/**
 * The fake Discord's world as it stands: users, members, roles, channels and their messages, what
 * the fake recorded for assertions, the snowflake generator and the change notifications that
 * `waitFor` listens to. Everything else of the fake reads and writes this one object.
 */
import { EventEmitter } from "node:events";
import type { APIChannel, APIGuildMember, APIMessage, APIRole, APIUser } from "discord.js";
import { createSnowflakes, type FakeDiscordWorld, type PrivilegedIntent } from "../discord-fixtures.js";
import type { FailureScript, FakeDiscord } from "../discord-server.js";

/** An interaction the fake handed out, with what answering it is still allowed to do. */
export interface PendingInteraction {
  token: string;
  createdAt: number;
  acknowledged: boolean;
  channelId: string;
  messageId?: string;
  autocomplete?: boolean;
  /** How it was acknowledged: its first response's type and whether that was ephemeral (for edits of @original). */
  responseType?: number;
  ephemeral?: boolean;
}

/** The shared state of one running fake (the records are the very arrays the fake exposes). */
export interface DiscordState
  extends Pick<
    FakeDiscord,
    | "token"
    | "world"
    | "requests"
    | "violations"
    | "pings"
    | "typing"
    | "interactionResponses"
    | "interactionEdits"
    | "commands"
  > {
  readonly now: () => number;
  readonly nextId: () => string;
  readonly changes: EventEmitter;
  /** Tells every waiter that something observable changed. */
  readonly changed: () => void;
  readonly privileged: ReadonlySet<PrivilegedIntent>;
  readonly interactionTimeoutMs: number;
  readonly users: Map<string, APIUser>;
  readonly members: Map<string, APIGuildMember>;
  readonly roles: Map<string, APIRole>;
  readonly channels: Map<string, APIChannel>;
  readonly denied: Set<string>;
  /** Channels where the bot may not send voice messages (Send Voice Messages denied: 403, 50013). */
  readonly voiceDenied: Set<string>;
  /** Largest multipart request taken (413 above it). */
  readonly uploadLimitBytes: number;
  readonly failures: (FailureScript & { left: number })[];
  readonly interactions: Map<string, PendingInteraction>;
  /** The loopback port, known once the server listens (URLs handed out read it then). */
  port: number;
  /** A channel's messages, oldest first (the stored list itself). */
  messagesIn(channelId: string): APIMessage[];
  findMessage(channelId: string, messageId: string): APIMessage | undefined;
}

/** What the state is built from (defaults already applied). */
export interface DiscordStateOptions {
  now: () => number;
  token: string;
  world: FakeDiscordWorld;
  privilegedIntents: readonly PrivilegedIntent[];
  interactionTimeoutMs: number;
  uploadLimitBytes: number;
}

/** The guild a channel belongs to; undefined for DMs. */
export const guildOf = (channel: APIChannel): string | undefined =>
  "guild_id" in channel ? channel.guild_id : undefined;

/** Builds the state of a fresh fake from its world (channels are copied: the fake mutates them). */
export function createDiscordState({
  now,
  token,
  world,
  privilegedIntents,
  interactionTimeoutMs,
  uploadLimitBytes,
}: DiscordStateOptions): DiscordState {
  const changes = new EventEmitter();
  changes.setMaxListeners(0);
  const store = new Map<string, APIMessage[]>();
  const messagesIn = (channelId: string): APIMessage[] => {
    let list = store.get(channelId);
    if (!list) store.set(channelId, (list = []));
    return list;
  };
  return {
    now,
    token,
    world,
    nextId: createSnowflakes(now),
    changes,
    changed: (): void => void changes.emit("change"),
    privileged: new Set<PrivilegedIntent>(privilegedIntents),
    interactionTimeoutMs,
    users: new Map<string, APIUser>([world.bot, ...Object.values(world.users)].map((u) => [u.id, u])),
    members: new Map<string, APIGuildMember>(world.members.map((m) => [m.user.id, m])),
    roles: new Map([world.roles.everyone, world.roles.moderators, world.roles.botRole].map((r) => [r.id, r])),
    channels: new Map<string, APIChannel>(
      [...Object.values(world.channels), ...(world.otherGuilds ?? []).map((g) => g.general)].map((c) => [
        c.id,
        structuredClone(c) as APIChannel,
      ]),
    ),
    denied: new Set<string>(),
    voiceDenied: new Set<string>(),
    uploadLimitBytes,
    failures: [],
    requests: [],
    violations: [],
    pings: [],
    typing: [],
    interactionResponses: [],
    interactionEdits: [],
    commands: [],
    interactions: new Map<string, PendingInteraction>(),
    port: 0,
    messagesIn,
    findMessage: (channelId, messageId) => messagesIn(channelId).find((m) => m.id === messageId),
  };
}
