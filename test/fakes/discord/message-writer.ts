/**
 * The bot's messages through REST: creating one (permissions, validation, replies, mentions as
 * allowed_mentions lets them through), editing one (only the bot's own; an edit is re-parsed for
 * mentions) and removing one, each stored, recorded as pings when someone is notified, and
 * dispatched to the gateway sessions that may see it.
 */
import { ChannelType, MessageFlags, MessageType, type APIMessage } from "discord.js";
import type { FakeGateway } from "./gateway.js";
import { INTENT_DIRECT_MESSAGES, INTENT_GUILD_MESSAGES, messageEventFor } from "./gateway-payloads.js";
import { apiError, formError, json, type HttpAnswer } from "./http-answer.js";
import { applyAllowed, parseMentions } from "./mentions.js";
import { contentProblem } from "./message-validation.js";
import { guildOf, type DiscordState } from "./state.js";
import type { UploadedFile } from "./multipart.js";
import type { FakeAttachmentInput } from "./attachments.js";

/** Where the bot's files are kept and served (the fake's CDN). */
export interface BotFileStore {
  storeBotFiles(channelId: string, inputs: readonly FakeAttachmentInput[]): APIMessage["attachments"];
}

/**
 * What Discord refuses in a voice message (IS_VOICE_MESSAGE): text beside it (50159), anything but one
 * audio file (50160), a file without its duration and waveform, or a waveform over 256 samples (50161).
 */
const voiceProblem = (body: Record<string, unknown>, files: readonly UploadedFile[]): HttpAnswer | undefined => {
  if (typeof body.content === "string" && body.content !== "")
    return apiError(400, 50159, "Voice messages do not support additional content.");
  if (files.length !== 1 || !files[0]!.contentType.startsWith("audio/"))
    return apiError(400, 50160, "Voice messages must have a single audio attachment.");
  const meta = (Array.isArray(body.attachments) ? body.attachments : []).find(
    (a: { id?: unknown }) => Number(a?.id) === files[0]!.index,
  ) as { duration_secs?: unknown; waveform?: unknown } | undefined;
  const waveform = typeof meta?.waveform === "string" ? Buffer.from(meta.waveform, "base64") : undefined;
  if (
    typeof meta?.duration_secs !== "number" ||
    !(meta.duration_secs > 0) ||
    !waveform ||
    waveform.length === 0 ||
    waveform.length > 256 ||
    waveform.toString("base64") !== meta.waveform
  )
    return apiError(400, 50161, "Voice messages must have supporting metadata.");
  return undefined;
};

/** A message as `referenced_message` carries it: a copy without its own reference. */
export const referencedCopy = (m: APIMessage): APIMessage => {
  const { referenced_message: _r, ...rest } = m;
  return structuredClone(rest) as APIMessage;
};

/** Stores messages and tells the gateway, the way Discord's message endpoints do. */
export interface MessageWriter {
  /** Stores a message (from anyone), updates its channel and dispatches MESSAGE_CREATE. */
  storeAndDispatch(message: APIMessage): void;
  /** POST /channels/:id/messages (and interaction replies, which pass `extra`), with the files of a multipart request. */
  createBotMessage(
    channelId: string,
    body: Record<string, unknown>,
    extra?: Partial<APIMessage>,
    files?: readonly UploadedFile[],
  ): HttpAnswer;
  /** PATCH /channels/:id/messages/:id. */
  editBotMessage(channelId: string, messageId: string, body: Record<string, unknown>): HttpAnswer;
  /** Deletes a message and dispatches MESSAGE_DELETE; false when there was none. */
  removeMessage(channelId: string, messageId: string): boolean;
}

/** The message writer over the fake's state and gateway. */
export function createMessageWriter(
  state: DiscordState,
  gateway: FakeGateway,
  fileStore?: BotFileStore,
): MessageWriter {
  const { now, pings, channels, denied, findMessage, messagesIn, nextId, world, users } = state;
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
    if (channel && "last_message_id" in channel)
      (channel as { last_message_id?: string | null }).last_message_id = message.id;
    if (channel && channel.type === ChannelType.PublicThread) {
      channel.message_count = (channel.message_count ?? 0) + 1;
      channel.total_message_sent = (channel.total_message_sent ?? 0) + 1;
    }
    recordPings(message, "create");
    gateway.dispatch("MESSAGE_CREATE", (session) => messageEventFor(state, session, message));
  };

  const createBotMessage = (
    channelId: string,
    body: Record<string, unknown>,
    extra: Partial<APIMessage> = {},
    files: readonly UploadedFile[] = [],
  ): HttpAnswer => {
    const channel = channels.get(channelId);
    if (!channel) return apiError(404, 10003, "Unknown Channel");
    if (denied.has(channelId)) return apiError(403, 50013, "Missing Permissions");
    const voice = typeof body.flags === "number" && (body.flags & MessageFlags.IsVoiceMessage) !== 0;
    if (voice && state.voiceDenied.has(channelId)) return apiError(403, 50013, "Missing Permissions");
    const problem = voice ? voiceProblem(body, files) : contentProblem(body, files.length === 0);
    if (problem) return problem;
    const inGuild = guildOf(channel) !== undefined;
    let reference: APIMessage["message_reference"];
    let referenced: APIMessage | undefined;
    const ref = body.message_reference as
      | { message_id?: string; channel_id?: string; fail_if_not_exists?: boolean }
      | undefined;
    if (ref && typeof ref === "object" && ref.message_id) {
      referenced = findMessage(ref.channel_id ?? channelId, ref.message_id);
      if (!referenced && ref.fail_if_not_exists !== false) {
        return formError("message_reference", "REPLIES_UNKNOWN_MESSAGE", "Unknown message");
      }
      if (referenced)
        reference = {
          type: 0,
          channel_id: channelId,
          message_id: referenced.id,
          ...(inGuild ? { guild_id: guildOf(channel)! } : {}),
        };
    }
    const content = typeof body.content === "string" ? body.content : "";
    const mentioned = applyAllowed(
      parseMentions(state, content, inGuild),
      body.allowed_mentions,
      referenced?.author.id,
    );
    const flags =
      typeof body.flags === "number"
        ? body.flags & (MessageFlags.SuppressEmbeds | MessageFlags.SuppressNotifications | MessageFlags.IsVoiceMessage)
        : 0;
    // Each file with the metadata its attachments[] entry gave (filename, a voice message's duration and waveform).
    const listed = (Array.isArray(body.attachments) ? body.attachments : []) as {
      id?: unknown;
      filename?: unknown;
      duration_secs?: unknown;
      waveform?: unknown;
    }[];
    const attachments = fileStore
      ? fileStore.storeBotFiles(
          channelId,
          files.map((f) => {
            const meta = listed.find((a) => Number(a.id) === f.index);
            return {
              filename: typeof meta?.filename === "string" ? meta.filename : f.filename,
              bytes: f.bytes,
              ...(f.contentType ? { contentType: f.contentType } : {}),
              ...(voice && meta
                ? { voice: { durationSecs: meta.duration_secs as number, waveform: meta.waveform as string } }
                : {}),
            };
          }),
        )
      : [];
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
      attachments,
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
    if (message.author.id !== world.bot.id)
      return apiError(403, 50005, "Cannot edit a message authored by another user");
    const problem = contentProblem(body, false);
    if (problem) return problem;
    const next = { ...message };
    if (body.content !== undefined) next.content = typeof body.content === "string" ? body.content : "";
    if (body.components !== undefined)
      next.components = Array.isArray(body.components)
        ? (structuredClone(body.components) as APIMessage["components"])
        : [];
    if (body.embeds !== undefined)
      next.embeds = Array.isArray(body.embeds) ? (body.embeds as APIMessage["embeds"]) : [];
    if (typeof body.flags === "number")
      next.flags = ((message.flags ?? 0) & ~MessageFlags.SuppressEmbeds) | (body.flags & MessageFlags.SuppressEmbeds);
    if (next.content.trim() === "" && next.embeds.length === 0 && (next.components?.length ?? 0) === 0) {
      return apiError(400, 50006, "Cannot send an empty message");
    }
    const inGuild = guildOf(channel) !== undefined;
    // An edit without allowed_mentions is parsed like a new message would be: the strict reading.
    const mentioned = applyAllowed(parseMentions(state, next.content, inGuild), body.allowed_mentions, undefined);
    next.mention_everyone = mentioned.everyone;
    next.mentions = mentioned.users.map((u) => users.get(u)!);
    next.mention_roles = mentioned.roles;
    next.edited_timestamp = new Date(now()).toISOString();
    const list = messagesIn(channelId);
    list[list.indexOf(message)] = next;
    recordPings(next, "edit");
    gateway.dispatch("MESSAGE_UPDATE", (session) => messageEventFor(state, session, next));
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

  return { storeAndDispatch, createBotMessage, editBotMessage, removeMessage };
}
