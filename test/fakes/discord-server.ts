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
 *
 * This file is the fake's public face (its types and the wiring); the parts live in ./discord/:
 * the state, the message writer and its validation, the gateway, the REST routes by area, the
 * HTTP transport in front of them, and what tests do to and read from the world.
 */
import type { APIApplicationCommand, APIMessage, APIUser, MessageType } from "discord.js";
import {
  createDefaultWorld,
  withOtherGuilds,
  type FakeDiscordWorld,
  type PrivilegedIntent,
} from "./discord-fixtures.js";
import { createFakeGateway, type FakeGateway } from "./discord/gateway.js";
import { createFakeAttachments, type FakeAttachmentInput } from "./discord/attachments.js";
import { guildCreate, guildIdsOf, readyData } from "./discord/gateway-payloads.js";
import { createRequestHandler, listenOnLoopback } from "./discord/http-transport.js";
import { createInspection } from "./discord/inspection.js";
import { createMessageWriter } from "./discord/message-writer.js";
import { messageBucketRules } from "./discord/rest-route.js";
import { applicationRoutes } from "./discord/rest-routes-application.js";
import { channelMessageRoutes } from "./discord/rest-routes-channel-messages.js";
import { gatewayUserGuildRoutes } from "./discord/rest-routes-gateway-users-guilds.js";
import { reactionRoutes, type ReactionEvent } from "./discord/rest-routes-reactions.js";
import { threadRoutes } from "./discord/rest-routes-threads.js";
import { interactionCommandRoutes } from "./discord/rest-routes-interactions-commands.js";
import { createDiscordState } from "./discord/state.js";
import { createUserActions } from "./discord/user-actions.js";
import { createUserInteractions } from "./discord/user-interactions.js";

import { DEFAULT_UPLOAD_LIMIT_BYTES } from "./discord/multipart.js";

/** MessageFlags.IsVoiceMessage. */
const IS_VOICE_MESSAGE = 1 << 13;

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
  /** Sharding as Discord enforces it: GET /gateway/bot's `shards`, its max_concurrency, and the guilds
   * one session may hold before close 4011 (Discord: 2,500). Defaults 1, 1, 2500. */
  sharding?: { recommendedShards?: number; maxConcurrency?: number; maxGuildsPerSession?: number };
  /** Largest multipart request (all files of a message together) before a 413 (Discord's default: 10 MiB). */
  uploadLimitBytes?: number;
  /** More guilds the bot is in, each with a #general (`withOtherGuilds`: 3 cover every shard of 4). Default 0. */
  otherGuilds?: number;
}

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
  /** The files of a multipart request (its JSON, from payload_json, is `body`). */
  files?: { index: number; filename: string; contentType: string; size: number }[];
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

/** An edit of an interaction's original response (PATCH /webhooks/:app/:token/messages/@original). */
export interface InteractionEditRecord {
  at: number;
  interactionId: string;
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
  /** Message flags (e.g. IS_VOICE_MESSAGE, 8192, as `userSendsVoice` sets). */
  flags?: number;
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
  readonly ids: {
    guild: string;
    general: string;
    random: string;
    thread: string;
    dm: string;
    /** The other guilds (`otherGuilds`) and their #general, in order. */
    otherGuilds: { guild: string; general: string }[];
  };
  readonly gateway: FakeGateway;
  readonly requests: RecordedRequest[];
  /** Threads the bot started on a message (their ids), oldest first. */
  readonly threadsStarted: readonly string[];
  /** Every reaction the bot added or removed, in order. */
  readonly reactionLog: readonly ReactionEvent[];
  /** The bot's reactions on a message now. */
  botReactions(messageId: string): string[];
  readonly violations: RateLimitViolation[];
  readonly pings: PingRecord[];
  readonly typing: { at: number; channelId: string }[];
  readonly interactionResponses: InteractionResponseRecord[];
  /** Edits of interactions' original responses (what a deferred reply finally says), in order. */
  readonly interactionEdits: InteractionEditRecord[];
  readonly commands: APIApplicationCommand[];
  /** A user posts a message (stored, then MESSAGE_CREATE to every session that may see it). */
  userSays(opts: UserSaysOptions): APIMessage;
  /** A user posts a message with files; they are served like Discord's CDN (signed URLs on the fake's host). */
  userUploads(opts: Omit<UserSaysOptions, "attachments"> & { files: FakeAttachmentInput[] }): Promise<APIMessage>;
  /**
   * A user records a voice message: as the Discord client sends it, no text, one `voice-message.ogg`
   * (audio/ogg) with `duration_secs` and a waveform, and the IS_VOICE_MESSAGE flag.
   */
  userSendsVoice(
    opts: Omit<UserSaysOptions, "attachments" | "content" | "flags"> & { bytes: Buffer; durationSecs: number },
  ): Promise<APIMessage>;
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
  /** The bot loses Send Voice Messages in a channel: a voice message there gets 403 (50013); other messages go through. */
  denyVoiceMessages(channelId: string): void;
  /** A moderator deletes a message (MESSAGE_DELETE dispatched). */
  deleteMessage(channelId: string, messageId: string): void;
  /** A user presses a button on a message (INTERACTION_CREATE dispatched); returns the interaction's id and token. */
  clickButton(opts: { channelId: string; messageId: string; customId: string; user?: APIUser }): {
    id: string;
    token: string;
  };
  /** A user runs a registered slash command (with option values, as the client sends them); returns the interaction's id and token. */
  runCommand(opts: { channelId: string; name: string; user?: APIUser; options?: { name: string; value: string }[] }): {
    id: string;
    token: string;
  };
  /**
   * A user picks a registered message command ("Apps → Ask TestBot") on a message: INTERACTION_CREATE
   * with data.type 3, the target_id and the message in resolved.messages, as Discord sends it.
   */
  runMessageCommand(opts: { channelId: string; messageId: string; name: string; user?: APIUser }): {
    id: string;
    token: string;
  };
  /** A user types into an autocomplete option of a registered command; the bot's choices arrive as a type 8 response. */
  autocomplete(opts: { channelId: string; name: string; option: string; typed: string; user?: APIUser }): {
    id: string;
    token: string;
  };
  close(): Promise<void>;
}

/** Starts the fake on 127.0.0.1 with a free port. */
export async function startFakeDiscord(options: FakeDiscordOptions = {}): Promise<FakeDiscord> {
  const state = createDiscordState({
    now: options.now ?? Date.now,
    token: options.token ?? "MTEwMDAwMDAwMDAwMDAwMDAwMg.fake.discord-test-token",
    world: withOtherGuilds(options.world ?? createDefaultWorld(), options.otherGuilds ?? 0),
    privilegedIntents: options.privilegedIntents ?? ["MessageContent"],
    interactionTimeoutMs: options.interactionTimeoutMs ?? 3000,
    uploadLimitBytes: options.uploadLimitBytes ?? DEFAULT_UPLOAD_LIMIT_BYTES,
  });
  const { now, token, world, nextId } = state;
  const attachments = createFakeAttachments({
    origin: () => `http://127.0.0.1:${state.port}`,
    nextId: () => nextId(),
    now,
  });
  const gateway = createFakeGateway({
    token,
    privilegedIntents: state.privileged,
    heartbeatIntervalMs: options.heartbeatIntervalMs ?? 41_250,
    ready: (sessionId, shard) => readyData(state, sessionId, shard),
    guildCreates: () => guildIdsOf(state).map((id) => guildCreate(state, id)),
    onChange: state.changed,
    maxConcurrency: options.sharding?.maxConcurrency ?? 1,
    maxGuildsPerSession: options.sharding?.maxGuildsPerSession ?? 2500,
  });
  const writer = createMessageWriter(state, gateway, attachments);
  const threadsStarted: string[] = [];
  const reactionLog: ReactionEvent[] = [];
  const reactions = new Map<string, Set<string>>();
  const routes = [
    ...gatewayUserGuildRoutes(state, gateway, options.notInAnyGuild, {
      shards: options.sharding?.recommendedShards ?? 1,
      maxConcurrency: options.sharding?.maxConcurrency ?? 1,
    }),
    ...applicationRoutes(state),
    ...interactionCommandRoutes(state, writer),
    ...channelMessageRoutes(state, writer, messageBucketRules(options.messageWriteLimit)),
    ...reactionRoutes(state, reactionLog, reactions),
    ...threadRoutes(state, gateway, messageBucketRules(options.messageWriteLimit), threadsStarted),
  ];
  const server = await listenOnLoopback(state, createRequestHandler({ state, routes, attachments }), gateway);
  const port = state.port;

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
      otherGuilds: (world.otherGuilds ?? []).map((g) => ({ guild: g.id, general: g.general.id })),
    },
    gateway,
    requests: state.requests,
    threadsStarted,
    reactionLog,
    botReactions: (messageId: string) => [...(reactions.get(messageId) ?? [])],
    violations: state.violations,
    pings: state.pings,
    typing: state.typing,
    interactionResponses: state.interactionResponses,
    interactionEdits: state.interactionEdits,
    commands: state.commands,
    ...createUserActions(state, writer),
    async userUploads({ files, ...opts }) {
      return fake.userSays({ ...opts, attachments: await attachments.upload(opts.channelId, files) });
    },
    async userSendsVoice({ bytes, durationSecs, ...opts }) {
      const waveform = Buffer.alloc(Math.min(256, Math.max(1, Math.round(durationSecs * 10))), 0x80).toString("base64");
      const files = [
        { filename: "voice-message.ogg", bytes, contentType: "audio/ogg", voice: { durationSecs, waveform } },
      ];
      return fake.userSays({
        ...opts,
        content: "",
        flags: IS_VOICE_MESSAGE,
        attachments: await attachments.upload(opts.channelId, files),
      });
    },
    attachmentDownloads: attachments.downloads,
    denyVoiceMessages: (channelId) => void state.voiceDenied.add(channelId),
    ...createInspection(state),
    ...createUserInteractions(state, gateway),

    async close() {
      await gateway.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      state.changes.removeAllListeners();
    },
  };
  return fake;
}
