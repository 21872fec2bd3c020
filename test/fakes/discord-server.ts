/**
 * A fake Discord for tests: one node:http server on 127.0.0.1 with REST under /api/v10 (and v9)
 * and a WebSocket gateway, faithful enough that the real discord.js client logs in, receives
 * messages and interactions, and its REST calls are recorded unmodified.
 *
 * What it holds the client to, like Discord does: the bot token on every REST call (401),
 * intents on IDENTIFY (4013/4014), message content hidden without the MessageContent intent,
 * 2000 code points per message (400/50035), empty messages (50006), unknown messages (10008),
 * editing someone else's message (50005), per-channel message-write buckets (5 per 5 s, with
 * X-RateLimit-* headers on every answer and a 429 + retry_after when exceeded; each violation is
 * recorded), allowed_mentions deciding who is actually pinged, interaction tokens that expire
 * after 3 s and acknowledge once (10062/40060). Scripted failures: 429 and 5xx on demand.
 *
 * Typical use:
 *   const discord = await startFakeDiscord();
 *   const client = new Client({ intents, rest: { api: discord.apiBase } }); await client.login(discord.token);
 *   discord.userSays({ channelId: discord.ids.general, author: discord.users.alice, content: "hi", mentionsBot: true });
 *   await discord.waitFor(() => discord.botMessages(discord.ids.general).at(-1));
 *   await client.destroy(); await discord.close();
 */
import { EventEmitter } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { randomBytes } from "node:crypto";
import {
  ApplicationCommandOptionType,
  ChannelType,
  PermissionFlagsBits,
  PermissionsBitField,
  ComponentType,
  InteractionType,
  MessageFlags,
  MessageType,
  type APIApplicationCommand,
  type APIChannel,
  type ChannelFlags,
  type APIDMChannel,
  type APIGuildMember,
  type APIMessage,
  type APIUser,
  type GatewayGuildCreateDispatchData,
  type GatewayReadyDispatchData,
} from "discord.js";
import { createDefaultWorld, createSnowflakes, staticGuildFields, type FakeDiscordWorld, type PrivilegedIntent } from "./discord-fixtures.js";
import { createFakeGateway, type FakeGateway, type FakeGatewaySession } from "./discord-gateway.js";
import { createRateBuckets, type BucketRule } from "./discord-rate-buckets.js";
import { createFakeAttachments, type FakeAttachmentInput } from "./discord-attachments.js";

/** Options of the fake; every one has a realistic default. */
export interface FakeDiscordOptions {
  token?: string;
  world?: FakeDiscordWorld;
  /** Privileged intents switched on "in the developer portal" (default: MessageContent only). */
  privilegedIntents?: PrivilegedIntent[];
  /** HELLO's heartbeat_interval (Discord sends 41250). */
  heartbeatIntervalMs?: number;
  /** Message writes (POST + PATCH) per channel per window (Discord: 5 per 5 s). */
  messageWriteLimit?: { limit: number; windowMs: number };
  /** Clock for rate limits, timestamps and snowflakes. */
  now?: () => number;
  /** How long an interaction token may be answered (Discord: 3 s). */
  interactionTimeoutMs?: number;
  /** The bot has been invited nowhere yet: GET /users/@me/guilds answers []. Default false. */
  notInAnyGuild?: boolean;
}

/** GET /applications/@me `flags` for the privileged intents switched on (an unverified bot gets the _LIMITED bits). */
const LIMITED_INTENT_FLAGS: Record<PrivilegedIntent, number> = { GuildPresences: 1 << 13, GuildMembers: 1 << 15, MessageContent: 1 << 19 };

/** One REST call as the fake received it. */
export interface RecordedRequest {
  at: number;
  method: string;
  /** Path after /api/v10, e.g. /channels/123/messages. */
  path: string;
  /** The route with ids replaced: "POST /channels/:id/messages". */
  route: string;
  apiVersion: string;
  query: string;
  status: number;
  channelId?: string;
  messageId?: string;
  /** Parsed JSON body (undefined when none; an array for bulk routes such as PUT commands). */
  body: Record<string, any> | undefined;
  allowedMentions?: unknown;
  messageReference?: unknown;
}

/** A request refused with 429 because a bucket was exhausted (not scripted failures). */
export interface RateLimitViolation {
  at: number;
  channelId: string;
  bucket: string;
  route: string;
  retryAfterMs: number;
}

/** Who a message (or an edit) actually notified. */
export interface PingRecord {
  at: number;
  channelId: string;
  messageId: string;
  authorId: string;
  via: "create" | "edit";
  everyone: boolean;
  users: string[];
  roles: string[];
}

/** A scripted failure for the next matching request(s). */
export interface FailureScript {
  /** "PATCH /channels/:id/messages/:id"; undefined = any route. */
  route?: string;
  channelId?: string;
  status: 429 | 500 | 502 | 503 | 504;
  /** For 429: retry_after in ms (default 1000). */
  retryAfterMs?: number;
  global?: boolean;
  times?: number;
}

/** An answer the bot gave to an interaction. */
export interface InteractionResponseRecord {
  at: number;
  interactionId: string;
  type: number;
  data: Record<string, unknown> | undefined;
  ephemeral: boolean;
}

/** Options of `userSays`. */
export interface UserSaysOptions {
  channelId: string;
  /** Default: Alice. */
  author?: APIUser;
  content: string;
  /** Prefixes `<@bot>` (if not already in the text), like picking the bot in the client's autocomplete. */
  mentionsBot?: boolean;
  /** Id of a message in the same channel this one replies to. */
  replyTo?: string;
  /** The client's "@ON" reply toggle (default true): the replied-to author is mentioned. */
  mentionRepliedUser?: boolean;
  /** A system message type (e.g. MessageType.UserJoin) instead of a normal one. */
  type?: MessageType;
  /** Sent through a webhook (author.bot is true and webhook_id set, as on Discord). */
  webhookId?: string;
  /** Files uploaded with the message (use `userUploads`: uploading is asynchronous). */
  attachments?: APIMessage["attachments"];
}

/** The running fake. */
export interface FakeDiscord {
  /** Use as DISCORD_API_BASE / discord.js `rest.api`: http://127.0.0.1:port/api */
  readonly apiBase: string;
  readonly gatewayUrl: string;
  readonly token: string;
  readonly world: FakeDiscordWorld;
  readonly bot: APIUser;
  readonly users: FakeDiscordWorld["users"];
  readonly ids: { guild: string; general: string; random: string; thread: string; dm: string };
  readonly gateway: FakeGateway;
  readonly requests: RecordedRequest[];
  readonly violations: RateLimitViolation[];
  readonly pings: PingRecord[];
  readonly typing: { at: number; channelId: string }[];
  readonly interactionResponses: InteractionResponseRecord[];
  readonly commands: APIApplicationCommand[];
  /** A user posts a message (stored, then MESSAGE_CREATE to every session that may see it). */
  userSays(opts: UserSaysOptions): APIMessage;
  /** A user posts a message with files; they are served like Discord's CDN (signed URLs on the fake's host). */
  userUploads(opts: Omit<UserSaysOptions, "attachments"> & { files: FakeAttachmentInput[] }): Promise<APIMessage>;
  /** Attachment downloads the fake's CDN answered. */
  readonly attachmentDownloads: { path: string; status: number }[];
  /** Messages visible in a channel, oldest first (ephemeral replies are not in channels). */
  messages(channelId: string): APIMessage[];
  /** Only the bot's messages in a channel, oldest first. */
  botMessages(channelId: string): APIMessage[];
  /** Resolves with the probe's first truthy value; re-checks on every change (and every 10 ms); rejects after timeoutMs (default 5 s). */
  waitFor<T>(probe: () => T | undefined | null | false, opts?: { timeoutMs?: number; label?: string }): Promise<T>;
  failNext(script: FailureScript): void;
  /** The bot loses Send Messages in a channel (403, 50013). */
  denySend(channelId: string): void;
  /** A moderator deletes a message (MESSAGE_DELETE dispatched). */
  deleteMessage(channelId: string, messageId: string): void;
  /** A user presses a button on a message (INTERACTION_CREATE dispatched); returns the interaction's id and token. */
  clickButton(opts: { channelId: string; messageId: string; customId: string; user?: APIUser }): { id: string; token: string };
  /** A user runs a registered slash command (with option values, as the client sends them); returns the interaction's id and token. */
  runCommand(opts: { channelId: string; name: string; user?: APIUser; options?: { name: string; value: string }[] }): { id: string; token: string };
  /** A user types into an autocomplete option of a registered command; the bot's choices arrive as a type 8 response. */
  autocomplete(opts: { channelId: string; name: string; option: string; typed: string; user?: APIUser }): { id: string; token: string };
  close(): Promise<void>;
}

const API_PREFIX = /^\/api\/v(\d+)(\/.*)$/;
const SUPPORTED_VERSIONS = new Set(["9", "10"]);

class HttpAnswer {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly headers: Record<string, string> = {},
  ) {}
}

const json = (status: number, body: unknown): HttpAnswer => new HttpAnswer(status, body);
const noContent = (): HttpAnswer => new HttpAnswer(204, undefined);
const apiError = (status: number, code: number, message: string, errors?: unknown): HttpAnswer =>
  json(status, errors === undefined ? { message, code } : { message, code, errors });
const formError = (field: string, code: string, message: string): HttpAnswer =>
  apiError(400, 50035, "Invalid Form Body", { [field]: { _errors: [{ code, message }] } });

const codePoints = (s: string): number => [...s].length;

/** Starts the fake on 127.0.0.1 with a free port. */
export async function startFakeDiscord(options: FakeDiscordOptions = {}): Promise<FakeDiscord> {
  const now = options.now ?? Date.now;
  const token = options.token ?? "MTEwMDAwMDAwMDAwMDAwMDAwMg.fake.discord-test-token";
  const world = options.world ?? createDefaultWorld();
  const nextId = createSnowflakes(now);
  const changes = new EventEmitter();
  changes.setMaxListeners(0);
  const changed = (): void => void changes.emit("change");
  const privileged = new Set<PrivilegedIntent>(options.privilegedIntents ?? ["MessageContent"]);
  const interactionTimeoutMs = options.interactionTimeoutMs ?? 3000;

  const writeRule: BucketRule = {
    hash: "80c17d2f203122d936070c88c8d10f33",
    limit: options.messageWriteLimit?.limit ?? 5,
    windowMs: options.messageWriteLimit?.windowMs ?? 5000,
  };
  const typingRule: BucketRule = { hash: "a1b2c3d4e5f60718293a4b5c6d7e8f90", limit: 5, windowMs: 5000 };
  const defaultRule = (route: string): BucketRule => ({ hash: Buffer.from(route).toString("hex").slice(0, 32), limit: 50, windowMs: 1000 });
  const buckets = createRateBuckets(now);

  const users = new Map<string, APIUser>([world.bot, ...Object.values(world.users)].map((u) => [u.id, u]));
  const members = new Map<string, APIGuildMember>(world.members.map((m) => [m.user.id, m]));
  const roles = new Map([world.roles.everyone, world.roles.moderators, world.roles.botRole].map((r) => [r.id, r]));
  const channels = new Map<string, APIChannel>(Object.values(world.channels).map((c) => [c.id, structuredClone(c) as APIChannel]));
  const store = new Map<string, APIMessage[]>();
  const denied = new Set<string>();
  const failures: (FailureScript & { left: number })[] = [];
  const requests: RecordedRequest[] = [];
  const violations: RateLimitViolation[] = [];
  const pings: PingRecord[] = [];
  const typing: { at: number; channelId: string }[] = [];
  const interactionResponses: InteractionResponseRecord[] = [];
  const commands: APIApplicationCommand[] = [];
  const interactions = new Map<
    string,
    { token: string; createdAt: number; acknowledged: boolean; channelId: string; messageId?: string; autocomplete?: boolean }
  >();

  let port = 0;
  const attachments = createFakeAttachments({ origin: () => `http://127.0.0.1:${port}`, nextId: () => nextId(), now });
  const guildOf = (channel: APIChannel): string | undefined => ("guild_id" in channel ? channel.guild_id : undefined);
  const messagesIn = (channelId: string): APIMessage[] => {
    let list = store.get(channelId);
    if (!list) store.set(channelId, (list = []));
    return list;
  };
  const findMessage = (channelId: string, messageId: string): APIMessage | undefined => messagesIn(channelId).find((m) => m.id === messageId);

  // --- mentions: what the text mentions, and what allowed_mentions lets through --------------------
  interface Mentions {
    users: string[];
    roles: string[];
    everyone: boolean;
  }
  const parseMentions = (content: string, inGuild: boolean): Mentions => ({
    users: [...new Set([...content.matchAll(/<@!?(\d{15,21})>/g)].map((m) => m[1] ?? ""))].filter((u) => users.has(u)),
    roles: inGuild ? [...new Set([...content.matchAll(/<@&(\d{15,21})>/g)].map((m) => m[1] ?? ""))].filter((r) => roles.has(r)) : [],
    everyone: inGuild && /@(everyone|here)\b/.test(content),
  });
  const userWithMember = (userId: string, inGuild: boolean): APIUser & { member?: Omit<APIGuildMember, "user"> } => {
    const u = users.get(userId)!;
    const m = inGuild ? members.get(userId) : undefined;
    if (!m) return u;
    const { user: _user, ...rest } = m;
    return { ...u, member: rest };
  };

  type AllowedMentions = { parse?: unknown; users?: unknown; roles?: unknown; replied_user?: unknown };
  const validateAllowedMentions = (am: unknown): HttpAnswer | undefined => {
    if (am === undefined || am === null) return undefined;
    if (typeof am !== "object") return formError("allowed_mentions", "MODEL_TYPE_CONVERT", "Only dictionaries may be used in a ModelType");
    const { parse, users: u, roles: r } = am as AllowedMentions;
    if (parse !== undefined && (!Array.isArray(parse) || parse.some((p) => !["users", "roles", "everyone"].includes(p as string)))) {
      return formError("allowed_mentions.parse", "BASE_TYPE_CHOICES", "Value must be one of {'users', 'roles', 'everyone'}.");
    }
    const parsed = (parse ?? []) as string[];
    if (parsed.includes("users") && Array.isArray(u) && u.length > 0) {
      return formError("allowed_mentions", "MESSAGE_ALLOWED_MENTIONS_PARSE_EXCLUSIVE", 'parse:["users"] and users: [ids...] are mutually exclusive.');
    }
    if (parsed.includes("roles") && Array.isArray(r) && r.length > 0) {
      return formError("allowed_mentions", "MESSAGE_ALLOWED_MENTIONS_PARSE_EXCLUSIVE", 'parse:["roles"] and roles: [ids...] are mutually exclusive.');
    }
    if ((Array.isArray(u) && u.length > 100) || (Array.isArray(r) && r.length > 100)) {
      return formError("allowed_mentions", "BASE_TYPE_MAX_LENGTH", "Must be 100 or fewer in length.");
    }
    return undefined;
  };
  /** Without allowed_mentions Discord parses everything (and pings the replied-to author). */
  const applyAllowed = (found: Mentions, am: unknown, repliedAuthor: string | undefined): Mentions => {
    if (am === undefined || am === null) {
      return { ...found, users: [...new Set([...found.users, ...(repliedAuthor ? [repliedAuthor] : [])])] };
    }
    const { parse, users: u, roles: r, replied_user } = am as AllowedMentions;
    const parsed = Array.isArray(parse) ? (parse as string[]) : [];
    const allowedUsers = parsed.includes("users") ? found.users : found.users.filter((id) => Array.isArray(u) && u.includes(id));
    const allowedRoles = parsed.includes("roles") ? found.roles : found.roles.filter((id) => Array.isArray(r) && r.includes(id));
    const replied = replied_user === true && repliedAuthor ? [repliedAuthor] : [];
    return { users: [...new Set([...allowedUsers, ...replied])], roles: allowedRoles, everyone: found.everyone && parsed.includes("everyone") };
  };

  // --- gateway ---------------------------------------------------------------------------------
  const guildCreate = (): GatewayGuildCreateDispatchData => {
    const guildChannels = [...channels.values()].filter((c) => guildOf(c) === world.guildId);
    return {
      ...staticGuildFields,
      id: world.guildId,
      name: world.guildName,
      owner_id: world.users.alice.id,
      roles: [...roles.values()],
      channels: guildChannels.filter((c) => c.type !== ChannelType.PublicThread && c.type !== ChannelType.PrivateThread) as GatewayGuildCreateDispatchData["channels"],
      threads: guildChannels.filter((c) => c.type === ChannelType.PublicThread || c.type === ChannelType.PrivateThread) as GatewayGuildCreateDispatchData["threads"],
      members: [...members.values()],
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
  const gateway = createFakeGateway({
    token,
    privilegedIntents: privileged,
    heartbeatIntervalMs: options.heartbeatIntervalMs ?? 41_250,
    ready: (sessionId, shard): GatewayReadyDispatchData => ({
      v: 10,
      user: { ...world.bot, verified: true, mfa_enabled: false, email: null },
      guilds: [{ id: world.guildId, unavailable: true }],
      session_id: sessionId,
      resume_gateway_url: `ws://127.0.0.1:${port}/resume-gateway`,
      shard,
      application: { id: world.applicationId, flags: 1 << 23, flags_new: String(1 << 23) },
    }),
    guildCreates: () => [guildCreate()],
    onChange: changed,
  });

  const INTENT_GUILD_MESSAGES = 1 << 9;
  const INTENT_DIRECT_MESSAGES = 1 << 12;
  const INTENT_MESSAGE_CONTENT = 1 << 15;
  /** The MESSAGE_CREATE/UPDATE payload a session gets, or undefined if its intents exclude it. */
  const messageEventFor = (session: FakeGatewaySession, message: APIMessage): unknown => {
    const channel = channels.get(message.channel_id);
    if (!channel) return undefined;
    const guildId = guildOf(channel);
    const needed = guildId ? INTENT_GUILD_MESSAGES : INTENT_DIRECT_MESSAGES;
    if ((session.intents & needed) === 0) return undefined;
    const inGuild = guildId !== undefined;
    const mentionsBot = message.mentions.some((u) => u.id === world.bot.id);
    const contentVisible =
      (session.intents & INTENT_MESSAGE_CONTENT) !== 0 || !inGuild || mentionsBot || message.author.id === world.bot.id;
    const authorMember = inGuild ? members.get(message.author.id) : undefined;
    const { user: _u, ...memberNoUser } = authorMember ?? ({} as APIGuildMember);
    return {
      ...message,
      ...(contentVisible ? {} : { content: "", embeds: [], attachments: [], components: [] }),
      mentions: message.mentions.map((u) => userWithMember(u.id, inGuild)),
      ...(guildId ? { guild_id: guildId } : {}),
      ...(authorMember && !message.webhook_id ? { member: memberNoUser } : {}),
      channel_type: channel.type,
    };
  };

  // --- REST ------------------------------------------------------------------------------------
  interface Ctx {
    method: string;
    path: string;
    params: string[];
    query: URLSearchParams;
    /** The JSON body when it is an object. */
    body: Record<string, unknown> | undefined;
    /** The JSON body as sent (arrays included). */
    json: unknown;
  }
  interface Route {
    method: string;
    pattern: RegExp;
    route: string;
    auth: boolean;
    bucket?: (params: string[]) => [BucketRule, string] | undefined;
    handle(ctx: Ctx): HttpAnswer;
  }

  const contentProblem = (body: Record<string, unknown>, requireSomething: boolean): HttpAnswer | undefined => {
    const content = body.content;
    if (content !== undefined && content !== null && typeof content !== "string") {
      return formError("content", "BASE_TYPE_STRING", "Must be a string.");
    }
    if (typeof content === "string" && codePoints(content) > 2000) {
      return formError("content", "BASE_TYPE_MAX_LENGTH", "Must be 2000 or fewer in length.");
    }
    const components = body.components;
    if (components !== undefined && components !== null) {
      const problem = componentsProblem(components);
      if (problem) return problem;
    }
    const hasContent = typeof content === "string" && content.trim() !== "";
    const hasOther =
      (Array.isArray(body.embeds) && body.embeds.length > 0) ||
      (Array.isArray(body.components) && body.components.length > 0) ||
      (Array.isArray(body.sticker_ids) && body.sticker_ids.length > 0) ||
      body.poll !== undefined;
    if (requireSomething && !hasContent && !hasOther) return apiError(400, 50006, "Cannot send an empty message");
    return validateAllowedMentions(body.allowed_mentions);
  };

  const componentsProblem = (components: unknown): HttpAnswer | undefined => {
    if (!Array.isArray(components) || components.length > 5) return formError("components", "BASE_TYPE_MAX_LENGTH", "Must be 5 or fewer in length.");
    for (const [i, row] of components.entries()) {
      const r = row as { type?: unknown; components?: unknown };
      if (r.type !== ComponentType.ActionRow || !Array.isArray(r.components) || r.components.length < 1 || r.components.length > 5) {
        return formError(`components.${i}`, "UNION_TYPE_CHOICES", "Value of field \"type\" must be one of (1,).");
      }
      for (const [j, c] of r.components.entries()) {
        const b = c as { type?: unknown; style?: unknown; custom_id?: unknown; url?: unknown; label?: unknown };
        const at = `components.${i}.components.${j}`;
        if (b.type !== ComponentType.Button) return formError(`${at}.type`, "BASE_TYPE_CHOICES", "Value must be one of (2, 3, 5, 6, 7, 8).");
        if (typeof b.style !== "number" || b.style < 1 || b.style > 6) return formError(`${at}.style`, "BASE_TYPE_CHOICES", "Value must be one of (1, 2, 3, 4, 5, 6).");
        if (b.style === 5 ? typeof b.url !== "string" : typeof b.custom_id !== "string" || b.custom_id.length < 1 || b.custom_id.length > 100) {
          return formError(`${at}.custom_id`, "BASE_TYPE_REQUIRED", "This field is required");
        }
        if (typeof b.label === "string" && b.label.length > 80) return formError(`${at}.label`, "BASE_TYPE_MAX_LENGTH", "Must be 80 or fewer in length.");
      }
    }
    return undefined;
  };

  const recordPings = (message: APIMessage, via: "create" | "edit"): void => {
    if (message.mention_everyone || message.mentions.length > 0 || message.mention_roles.length > 0) {
      pings.push({
        at: now(),
        channelId: message.channel_id,
        messageId: message.id,
        authorId: message.author.id,
        via,
        everyone: message.mention_everyone,
        users: message.mentions.map((u) => u.id),
        roles: [...message.mention_roles],
      });
    }
  };

  const storeAndDispatch = (message: APIMessage): void => {
    messagesIn(message.channel_id).push(message);
    const channel = channels.get(message.channel_id);
    if (channel && "last_message_id" in channel) (channel as { last_message_id?: string | null }).last_message_id = message.id;
    if (channel && channel.type === ChannelType.PublicThread) {
      channel.message_count = (channel.message_count ?? 0) + 1;
      channel.total_message_sent = (channel.total_message_sent ?? 0) + 1;
    }
    recordPings(message, "create");
    gateway.dispatch("MESSAGE_CREATE", (session) => messageEventFor(session, message));
  };

  const referencedCopy = (m: APIMessage): APIMessage => {
    const { referenced_message: _r, ...rest } = m;
    return structuredClone(rest) as APIMessage;
  };

  const createBotMessage = (channelId: string, body: Record<string, unknown>, extra: Partial<APIMessage> = {}): HttpAnswer => {
    const channel = channels.get(channelId);
    if (!channel) return apiError(404, 10003, "Unknown Channel");
    if (denied.has(channelId)) return apiError(403, 50013, "Missing Permissions");
    const problem = contentProblem(body, true);
    if (problem) return problem;
    const inGuild = guildOf(channel) !== undefined;
    let reference: APIMessage["message_reference"];
    let referenced: APIMessage | undefined;
    const ref = body.message_reference as { message_id?: string; channel_id?: string; fail_if_not_exists?: boolean } | undefined;
    if (ref && typeof ref === "object" && ref.message_id) {
      referenced = findMessage(ref.channel_id ?? channelId, ref.message_id);
      if (!referenced && ref.fail_if_not_exists !== false) {
        return formError("message_reference", "REPLIES_UNKNOWN_MESSAGE", "Unknown message");
      }
      if (referenced) reference = { type: 0, channel_id: channelId, message_id: referenced.id, ...(inGuild ? { guild_id: guildOf(channel)! } : {}) };
    }
    const content = typeof body.content === "string" ? body.content : "";
    const mentioned = applyAllowed(parseMentions(content, inGuild), body.allowed_mentions, referenced?.author.id);
    const flags = typeof body.flags === "number" ? body.flags & (MessageFlags.SuppressEmbeds | MessageFlags.SuppressNotifications) : 0;
    const message: APIMessage = {
      id: nextId(),
      channel_id: channelId,
      author: world.bot,
      content,
      timestamp: new Date(now()).toISOString(),
      edited_timestamp: null,
      tts: false,
      mention_everyone: mentioned.everyone,
      mentions: mentioned.users.map((u) => users.get(u)!),
      mention_roles: mentioned.roles,
      attachments: [],
      embeds: Array.isArray(body.embeds) ? (body.embeds as APIMessage["embeds"]) : [],
      pinned: false,
      type: reference ? MessageType.Reply : MessageType.Default,
      flags,
      components: Array.isArray(body.components) ? (structuredClone(body.components) as APIMessage["components"]) : [],
      ...(reference ? { message_reference: reference, referenced_message: referencedCopy(referenced!) } : {}),
      ...(typeof body.nonce === "string" || typeof body.nonce === "number" ? { nonce: body.nonce } : {}),
      ...extra,
    };
    storeAndDispatch(message);
    return json(200, message);
  };

  const editBotMessage = (channelId: string, messageId: string, body: Record<string, unknown>): HttpAnswer => {
    const channel = channels.get(channelId);
    if (!channel) return apiError(404, 10003, "Unknown Channel");
    const message = findMessage(channelId, messageId);
    if (!message) return apiError(404, 10008, "Unknown Message");
    if (message.author.id !== world.bot.id) return apiError(403, 50005, "Cannot edit a message authored by another user");
    const problem = contentProblem(body, false);
    if (problem) return problem;
    const next = { ...message };
    if (body.content !== undefined) next.content = typeof body.content === "string" ? body.content : "";
    if (body.components !== undefined) next.components = Array.isArray(body.components) ? (structuredClone(body.components) as APIMessage["components"]) : [];
    if (body.embeds !== undefined) next.embeds = Array.isArray(body.embeds) ? (body.embeds as APIMessage["embeds"]) : [];
    if (typeof body.flags === "number") next.flags = ((message.flags ?? 0) & ~MessageFlags.SuppressEmbeds) | (body.flags & MessageFlags.SuppressEmbeds);
    if (next.content.trim() === "" && next.embeds.length === 0 && (next.components?.length ?? 0) === 0) {
      return apiError(400, 50006, "Cannot send an empty message");
    }
    const inGuild = guildOf(channel) !== undefined;
    // An edit without allowed_mentions is parsed like a new message would be: the strict reading.
    const mentioned = applyAllowed(parseMentions(next.content, inGuild), body.allowed_mentions, undefined);
    next.mention_everyone = mentioned.everyone;
    next.mentions = mentioned.users.map((u) => users.get(u)!);
    next.mention_roles = mentioned.roles;
    next.edited_timestamp = new Date(now()).toISOString();
    const list = messagesIn(channelId);
    list[list.indexOf(message)] = next;
    recordPings(next, "edit");
    gateway.dispatch("MESSAGE_UPDATE", (session) => messageEventFor(session, next));
    return json(200, next);
  };

  const removeMessage = (channelId: string, messageId: string): boolean => {
    const list = messagesIn(channelId);
    const index = list.findIndex((m) => m.id === messageId);
    if (index < 0) return false;
    list.splice(index, 1);
    const channel = channels.get(channelId);
    const guildId = channel ? guildOf(channel) : undefined;
    gateway.dispatch("MESSAGE_DELETE", (session) =>
      (session.intents & (guildId ? INTENT_GUILD_MESSAGES : INTENT_DIRECT_MESSAGES)) === 0
        ? undefined
        : { id: messageId, channel_id: channelId, ...(guildId ? { guild_id: guildId } : {}) },
    );
    return true;
  };

  const channelBucket = (rule: BucketRule) => (params: string[]): [BucketRule, string] => [rule, params[0] ?? ""];

  const routes: Route[] = [
    {
      method: "GET",
      pattern: /^\/gateway$/,
      route: "GET /gateway",
      auth: false,
      handle: () => json(200, { url: `ws://127.0.0.1:${port}` }),
    },
    {
      method: "GET",
      pattern: /^\/gateway\/bot$/,
      route: "GET /gateway/bot",
      auth: true,
      handle: () =>
        json(200, {
          url: `ws://127.0.0.1:${port}`,
          shards: 1,
          session_start_limit: { total: 1000, remaining: Math.max(0, 1000 - gateway.stats.identifies), reset_after: 14_400_000, max_concurrency: 1 },
        }),
    },
    { method: "GET", pattern: /^\/users\/@me$/, route: "GET /users/@me", auth: true, handle: () => json(200, world.bot) },
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
          options.notInAnyGuild
            ? []
            : [{ id: world.guildId, name: world.guildName, icon: null, banner: null, owner: false, permissions: "274877975552", features: [], approximate_member_count: 4, approximate_presence_count: 2 }],
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
          (c): c is APIDMChannel => c.type === ChannelType.DM && (c.recipients ?? []).some((r) => r.id === recipient.id),
        );
        if (existing) return json(200, existing);
        const dm: APIDMChannel = { id: nextId(), type: ChannelType.DM, last_message_id: null, recipients: [recipient], flags: 0 as ChannelFlags, name: null };
        channels.set(dm.id, dm);
        return json(200, dm);
      },
    },
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
    {
      method: "PUT",
      pattern: /^\/applications\/(\d+)\/commands$/,
      route: "PUT /applications/:id/commands",
      auth: true,
      handle: ({ params, json: list }) => {
        if (params[0] !== world.applicationId) return apiError(403, 50001, "Missing Access");
        if (!Array.isArray(list)) return formError("_errors", "MODEL_TYPE_CONVERT", "Only iterables may be used in a ListType");
        const made: APIApplicationCommand[] = [];
        for (const [i, raw] of list.entries()) {
          const c = raw as { name?: unknown; description?: unknown; type?: unknown };
          if (typeof c.name !== "string" || !/^[-_\p{Ll}\p{Lo}\p{N}]{1,32}$/u.test(c.name)) {
            return formError(`${i}.name`, "APPLICATION_COMMAND_INVALID_NAME", "Command name is invalid");
          }
          if ((c.type ?? 1) === 1 && (typeof c.description !== "string" || c.description.length < 1 || c.description.length > 100)) {
            return formError(`${i}.description`, "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 100 in length.");
          }
          const previous = commands.find((x) => x.name === c.name);
          made.push({
            ...(raw as object),
            id: previous?.id ?? nextId(),
            application_id: world.applicationId,
            version: nextId(),
            type: (c.type as number | undefined) ?? 1,
            name: c.name,
            description: typeof c.description === "string" ? c.description : "",
            default_member_permissions: null,
            nsfw: false,
          } as APIApplicationCommand);
        }
        commands.splice(0, commands.length, ...made);
        changed();
        return json(200, made);
      },
    },
    {
      method: "GET",
      pattern: /^\/applications\/(\d+)\/commands$/,
      route: "GET /applications/:id/commands",
      auth: true,
      handle: () => json(200, commands),
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
        const { channels: _c, threads: _t, members: _m, presences: _p, voice_states: _v, ...guild } = guildCreate();
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
    {
      method: "GET",
      pattern: /^\/channels\/(\d+)\/messages$/,
      route: "GET /channels/:id/messages",
      auth: true,
      bucket: (p) => [defaultRule("GET /channels/:id/messages"), p[0] ?? ""],
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
      bucket: (p) => [defaultRule("GET /channels/:id/messages/:id"), p[0] ?? ""],
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
      bucket: channelBucket(writeRule),
      handle: ({ params, body }) => createBotMessage(params[0]!, body ?? {}),
    },
    {
      method: "PATCH",
      pattern: /^\/channels\/(\d+)\/messages\/(\d+)$/,
      route: "PATCH /channels/:id/messages/:id",
      auth: true,
      bucket: channelBucket(writeRule),
      handle: ({ params, body }) => editBotMessage(params[0]!, params[1]!, body ?? {}),
    },
    {
      method: "DELETE",
      pattern: /^\/channels\/(\d+)\/messages\/(\d+)$/,
      route: "DELETE /channels/:id/messages/:id",
      auth: true,
      bucket: (p) => [defaultRule("DELETE /channels/:id/messages/:id"), p[0] ?? ""],
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
      bucket: channelBucket(typingRule),
      handle: ({ params }) => {
        if (!channels.has(params[0]!)) return apiError(404, 10003, "Unknown Channel");
        if (denied.has(params[0]!)) return apiError(403, 50013, "Missing Permissions");
        typing.push({ at: now(), channelId: params[0]! });
        return noContent();
      },
    },
    {
      method: "POST",
      pattern: /^\/interactions\/(\d+)\/([^/]+)\/callback$/,
      route: "POST /interactions/:id/:token/callback",
      auth: false,
      handle: ({ params, body, query }) => {
        const interaction = interactions.get(params[0]!);
        if (!interaction || interaction.token !== params[1] || now() - interaction.createdAt > interactionTimeoutMs) {
          return apiError(404, 10062, "Unknown interaction");
        }
        if (interaction.acknowledged) return apiError(400, 40060, "Interaction has already been acknowledged.");
        const type = Number(body?.type);
        const data = body?.data as Record<string, unknown> | undefined;
        if (![1, 4, 5, 6, 7, 8, 9].includes(type)) return formError("type", "BASE_TYPE_CHOICES", "Value must be one of (1, 4, 5, 6, 7, 8, 9).");
        // An autocomplete interaction takes only choices (8), and choices answer nothing else.
        if ((type === 8) !== (interaction.autocomplete === true)) return apiError(400, 40004, "Interaction response type invalid for this interaction");
        if (type === 8) {
          const choices = (data as { choices?: unknown } | undefined)?.choices;
          if (!Array.isArray(choices) || choices.length > 25) return formError("data.choices", "BASE_TYPE_MAX_LENGTH", "Must be 25 or fewer in length.");
        }
        if ((type === 6 || type === 7) && !interaction.messageId) return apiError(400, 40004, "Interaction response type invalid for this interaction");
        const ephemeral = ((Number(data?.flags) || 0) & MessageFlags.Ephemeral) !== 0;
        if (type === 4 || type === 7) {
          const problem = contentProblem(data ?? {}, type === 4);
          if (problem) return problem;
        }
        interaction.acknowledged = true;
        interactionResponses.push({ at: now(), interactionId: params[0]!, type, data, ephemeral });
        let message: APIMessage | undefined;
        if (type === 4 && !ephemeral) {
          const answer = createBotMessage(interaction.channelId, data ?? {}, { application_id: world.applicationId });
          message = answer.body as APIMessage;
        } else if (type === 7 && interaction.messageId) {
          message = editBotMessage(interaction.channelId, interaction.messageId, data ?? {}).body as APIMessage;
        }
        changed();
        if (query.get("with_response") !== "true") return noContent();
        return json(200, {
          interaction: { id: params[0], type, response_message_id: message?.id, response_message_ephemeral: ephemeral },
          resource: { type, ...(message ? { message } : {}) },
        });
      },
    },
  ];

  // --- HTTP plumbing -------------------------------------------------------------------------------
  const readBody = async (req: IncomingMessage): Promise<string> => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString("utf8");
  };

  const write = (res: ServerResponse, answer: HttpAnswer): void => {
    const headers: Record<string, string> = { via: "1.1 google", ...answer.headers };
    if (answer.status === 204) {
      res.writeHead(204, headers).end();
    } else if (typeof answer.body === "string") {
      res.writeHead(answer.status, { ...headers, "content-type": "text/html" }).end(answer.body);
    } else {
      res.writeHead(answer.status, { ...headers, "content-type": "application/json" }).end(JSON.stringify(answer.body));
    }
  };

  const scripted = (routeName: string, channelId: string | undefined): HttpAnswer | undefined => {
    const index = failures.findIndex((f) => (!f.route || f.route === routeName) && (!f.channelId || f.channelId === channelId));
    if (index < 0) return undefined;
    const f = failures[index]!;
    f.left -= 1;
    if (f.left <= 0) failures.splice(index, 1);
    if (f.status === 429) {
      const retryAfterS = (f.retryAfterMs ?? 1000) / 1000;
      const headers: Record<string, string> = {
        "retry-after": String(Math.ceil(retryAfterS)),
        "x-ratelimit-scope": f.global ? "global" : "user",
      };
      if (f.global) headers["x-ratelimit-global"] = "true";
      return new HttpAnswer(429, { message: "You are being rate limited.", retry_after: retryAfterS, global: f.global ?? false }, headers);
    }
    if (f.status === 500) return json(500, { message: "500: Internal Server Error", code: 0 });
    return new HttpAnswer(f.status, `<html><head><title>${f.status}</title></head><body>${f.status} Bad Gateway</body></html>`);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? "/", "http://fake");
    const method = (req.method ?? "GET").toUpperCase();
    if (method === "GET" && attachments.serve(url, res)) return void changed();
    const raw = await readBody(req);
    const match = API_PREFIX.exec(url.pathname);
    const record: RecordedRequest = {
      at: now(),
      method,
      path: match?.[2] ?? url.pathname,
      route: `${method} ${url.pathname}`,
      apiVersion: match?.[1] ?? "",
      query: url.search,
      status: 0,
      body: undefined,
    };
    const answer = ((): HttpAnswer => {
      if (!match || !SUPPORTED_VERSIONS.has(match[1]!)) return apiError(404, 0, "404: Not Found");
      const path = match[2]!;
      const route = routes.find((r) => r.method === method && r.pattern.test(path));
      if (!route) {
        const known = routes.some((r) => r.pattern.test(path));
        return known ? apiError(405, 0, "405: Method Not Allowed") : apiError(404, 0, "404: Not Found");
      }
      const params = route.pattern.exec(path)!.slice(1);
      record.route = route.route;
      if (route.route.includes("/channels/:id")) record.channelId = params[0];
      if (route.route.includes("/messages/:id")) record.messageId = params[1];
      if (raw !== "") {
        if (!(req.headers["content-type"] ?? "").includes("application/json")) {
          return apiError(400, 50035, "Invalid Form Body", { _errors: [{ code: "CONTENT_TYPE_INVALID", message: "Expected application/json" }] });
        }
        try {
          record.body = JSON.parse(raw) as Record<string, any>;
        } catch {
          return apiError(400, 50109, "The request body contains invalid JSON.");
        }
        if (record.body && typeof record.body === "object" && !Array.isArray(record.body)) {
          if ("allowed_mentions" in record.body) record.allowedMentions = record.body.allowed_mentions;
          if ("message_reference" in record.body) record.messageReference = record.body.message_reference;
        }
      }
      if (route.auth && req.headers.authorization !== `Bot ${token}`) return apiError(401, 0, "401: Unauthorized");
      const failure = scripted(route.route, record.channelId);
      if (failure) return failure;
      let limitHeaders: Record<string, string> = {};
      const bucket = route.bucket?.(params);
      if (bucket) {
        const verdict = buckets.take(bucket[0], bucket[1]);
        limitHeaders = verdict.headers;
        if (verdict.limited) {
          violations.push({ at: now(), channelId: bucket[1], bucket: bucket[0].hash, route: route.route, retryAfterMs: Math.round(verdict.resetAfterS * 1000) });
          return new HttpAnswer(
            429,
            { message: "You are being rate limited.", retry_after: Number(verdict.resetAfterS.toFixed(3)), global: false },
            { ...limitHeaders, "retry-after": String(Math.ceil(verdict.resetAfterS)), "x-ratelimit-scope": "user" },
          );
        }
      }
      const body = Array.isArray(record.body) ? undefined : (record.body as Record<string, unknown> | undefined);
      const result = route.handle({ method, path, params, query: url.searchParams, body, json: record.body });
      return new HttpAnswer(result.status, result.body, { ...limitHeaders, ...result.headers });
    })();
    record.status = answer.status;
    requests.push(record);
    write(res, answer);
    changed();
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      res.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ message: String(error), code: 0 }));
    });
  });
  server.on("upgrade", (req, socket, head) => gateway.handleUpgrade(req, socket, head));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;

  // --- helpers for tests -----------------------------------------------------------------------
  /** A member's permissions in a channel, as interactions carry them: @everyone's and their roles' (no overwrites in this world); Administrator means all. */
  const memberPermissions = (roleIds: readonly string[]): string => {
    let bits = BigInt(world.roles.everyone.permissions);
    for (const roleId of roleIds) bits |= BigInt(roles.get(roleId)?.permissions ?? "0");
    return String((bits & PermissionFlagsBits.Administrator) !== 0n ? PermissionsBitField.All : bits);
  };

  const interactionBase = (channelId: string, user: APIUser) => {
    const channel = channels.get(channelId);
    if (!channel) throw new Error(`fake discord: unknown channel ${channelId}`);
    const guildId = guildOf(channel);
    const member = guildId ? members.get(user.id) : undefined;
    const id = nextId();
    const interactionToken = `aW50ZXJhY3Rpb246${randomBytes(24).toString("base64url")}`;
    return {
      id,
      token: interactionToken,
      common: {
        id,
        application_id: world.applicationId,
        token: interactionToken,
        version: 1,
        channel: channel,
        channel_id: channelId,
        ...(guildId
          ? {
              guild_id: guildId,
              guild: { id: guildId, locale: "en-US", features: [] },
              guild_locale: "en-US",
              member: {
                ...(member ?? { user, roles: [], joined_at: new Date(0).toISOString(), deaf: false, mute: false, flags: 0 }),
                user,
                permissions: memberPermissions(member?.roles ?? []),
              },
            }
          : { user }),
        app_permissions: "2248473465835073",
        locale: "en-US",
        entitlements: [],
        authorizing_integration_owners: guildId ? { "0": guildId } : { "1": user.id },
        context: guildId ? 0 : 1,
        attachment_size_limit: 10_485_760,
      },
    };
  };

  const fake: FakeDiscord = {
    apiBase: `http://127.0.0.1:${port}/api`,
    gatewayUrl: `ws://127.0.0.1:${port}`,
    token,
    world,
    bot: world.bot,
    users: world.users,
    ids: {
      guild: world.guildId,
      general: world.channels.general.id,
      random: world.channels.random.id,
      thread: world.channels.thread.id,
      dm: world.channels.dm.id,
    },
    gateway,
    requests,
    violations,
    pings,
    typing,
    interactionResponses,
    commands,

    userSays(opts) {
      const channel = channels.get(opts.channelId);
      if (!channel) throw new Error(`fake discord: unknown channel ${opts.channelId}`);
      const author = opts.author ?? world.users.alice;
      const inGuild = guildOf(channel) !== undefined;
      let content = opts.content;
      if (opts.mentionsBot && !content.includes(`<@${world.bot.id}>`) && !content.includes(`<@!${world.bot.id}>`)) {
        content = `<@${world.bot.id}> ${content}`;
      }
      const referenced = opts.replyTo ? findMessage(opts.channelId, opts.replyTo) : undefined;
      if (opts.replyTo && !referenced) throw new Error(`fake discord: no message ${opts.replyTo} in ${opts.channelId}`);
      const found = parseMentions(content, inGuild);
      const mentionUsers = [...found.users];
      if (referenced && opts.mentionRepliedUser !== false && !mentionUsers.includes(referenced.author.id)) mentionUsers.push(referenced.author.id);
      const guildId = guildOf(channel);
      const message: APIMessage = {
        id: nextId(),
        channel_id: opts.channelId,
        author: opts.webhookId ? { ...author, bot: true } : author,
        content,
        timestamp: new Date(now()).toISOString(),
        edited_timestamp: null,
        tts: false,
        mention_everyone: found.everyone,
        mentions: mentionUsers.map((u) => users.get(u)!),
        mention_roles: found.roles,
        attachments: opts.attachments ?? [],
        embeds: [],
        pinned: false,
        type: opts.type ?? (referenced ? MessageType.Reply : MessageType.Default),
        flags: 0 as MessageFlags,
        components: [],
        ...(opts.webhookId ? { webhook_id: opts.webhookId } : {}),
        ...(referenced
          ? {
              message_reference: { type: 0, channel_id: opts.channelId, message_id: referenced.id, ...(guildId ? { guild_id: guildId } : {}) },
              referenced_message: referencedCopy(referenced),
            }
          : {}),
      };
      storeAndDispatch(message);
      return message;
    },

    async userUploads({ files, ...opts }) {
      return fake.userSays({ ...opts, attachments: await attachments.upload(opts.channelId, files) });
    },
    attachmentDownloads: attachments.downloads,

    messages: (channelId) => [...messagesIn(channelId)],
    botMessages: (channelId) => messagesIn(channelId).filter((m) => m.author.id === world.bot.id),

    waitFor(probe, opts = {}) {
      const timeoutMs = opts.timeoutMs ?? 5000;
      return new Promise((resolve, reject) => {
        const check = (): boolean => {
          let value;
          try {
            value = probe();
          } catch (error) {
            cleanup();
            reject(error);
            return true;
          }
          if (value === undefined || value === null || value === false) return false;
          cleanup();
          resolve(value as never);
          return true;
        };
        const onChange = (): void => void check();
        const timer = setTimeout(() => {
          cleanup();
          const last = requests.slice(-5).map((r) => `${r.route} → ${r.status}`);
          reject(new Error(`fake discord: timed out after ${timeoutMs} ms waiting for ${opts.label ?? "condition"}; last requests: ${last.join(", ") || "none"}`));
        }, timeoutMs);
        // Also poll: probes often look at things outside the fake (a recording gateway, Redis).
        const poll = setInterval(onChange, 10);
        const cleanup = (): void => {
          clearTimeout(timer);
          clearInterval(poll);
          changes.off("change", onChange);
        };
        changes.on("change", onChange);
        check();
      });
    },

    failNext(script) {
      failures.push({ ...script, left: script.times ?? 1 });
    },
    denySend(channelId) {
      denied.add(channelId);
    },
    deleteMessage(channelId, messageId) {
      if (!removeMessage(channelId, messageId)) throw new Error(`fake discord: no message ${messageId} in ${channelId}`);
      changed();
    },

    clickButton({ channelId, messageId, customId, user = world.users.alice }) {
      const message = findMessage(channelId, messageId);
      if (!message) throw new Error(`fake discord: no message ${messageId} in ${channelId}`);
      const buttons = (message.components ?? []).flatMap((row) => ("components" in row ? (row.components as unknown[]) : []));
      if (!buttons.some((b) => typeof b === "object" && b !== null && "custom_id" in b && b.custom_id === customId)) {
        throw new Error(`fake discord: message ${messageId} has no component with custom_id ${customId}`);
      }
      const base = interactionBase(channelId, user);
      interactions.set(base.id, { token: base.token, createdAt: now(), acknowledged: false, channelId, messageId });
      const payload = { ...base.common, type: InteractionType.MessageComponent, data: { custom_id: customId, component_type: ComponentType.Button }, message };
      gateway.dispatch("INTERACTION_CREATE", () => payload);
      return { id: base.id, token: base.token };
    },

    runCommand({ channelId, name, user = world.users.alice, options }) {
      const command = commands.find((c) => c.name === name);
      if (!command) throw new Error(`fake discord: command /${name} is not registered (the client would not offer it)`);
      const known = (command.options ?? []).map((o) => o.name);
      for (const option of options ?? []) {
        if (!known.includes(option.name)) throw new Error(`fake discord: /${name} has no option "${option.name}" (the client would not send it)`);
      }
      const base = interactionBase(channelId, user);
      interactions.set(base.id, { token: base.token, createdAt: now(), acknowledged: false, channelId });
      const data = {
        id: command.id,
        name: command.name,
        type: command.type,
        ...(options?.length ? { options: options.map((o) => ({ name: o.name, type: ApplicationCommandOptionType.String, value: o.value })) } : {}),
      };
      const payload = { ...base.common, type: InteractionType.ApplicationCommand, data };
      gateway.dispatch("INTERACTION_CREATE", () => payload);
      return { id: base.id, token: base.token };
    },

    autocomplete({ channelId, name, option, typed, user = world.users.alice }) {
      const command = commands.find((c) => c.name === name);
      if (!command) throw new Error(`fake discord: command /${name} is not registered (the client would not offer it)`);
      const declared = (command.options ?? []).find((o) => o.name === option) as { autocomplete?: boolean } | undefined;
      if (!declared?.autocomplete) throw new Error(`fake discord: /${name} option "${option}" has no autocomplete (the client would not ask)`);
      const base = interactionBase(channelId, user);
      interactions.set(base.id, { token: base.token, createdAt: now(), acknowledged: false, channelId, autocomplete: true });
      const data = { id: command.id, name: command.name, type: command.type, options: [{ name: option, type: ApplicationCommandOptionType.String, value: typed, focused: true }] };
      gateway.dispatch("INTERACTION_CREATE", () => ({ ...base.common, type: InteractionType.ApplicationCommandAutocomplete, data }));
      return { id: base.id, token: base.token };
    },

    async close() {
      await gateway.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      changes.removeAllListeners();
    },
  };
  return fake;
}
