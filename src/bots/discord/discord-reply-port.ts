/**
 * Discord as the reply engine sees it: REST only (a worker needs no gateway connection), one port per job.
 * Pacing comes from the X-RateLimit-* headers; a 429 surfaces as RateLimitedError for our editor to honour.
 */
import type { InboundMessage } from "../../contracts/inbound-message.js";
import { toDiscordMarkdown } from "./discord-markdown.js";
import {
  RateLimitedError,
  RejectedContentError,
  type RenderedText,
  type ReplyPort,
  type ReplyPhase,
  type ReplyPortFactory,
  type SendOptions,
} from "../../contracts/reply-port.js";
import { STATUS_EMOJI, ownReactionPath, reactionChange } from "./discord-status-reactions.js";
import { DiscordApiError, type DiscordRestClient } from "./discord-rest-client.js";
import { stopButtonRow } from "./discord-stop-button.js";
import { DISCORD_DEFAULT_EDIT_INTERVAL_MS } from "./discord-pacing.js";
import { abortableSleep } from "../../shared/abortable-sleep.js";

/** Discord's per-message limit, in characters (Discord counts code points; UTF-16 length is never less). */
const DISCORD_MAX_MESSAGE_LENGTH = 2000;

/** Link previews are suppressed, as the Telegram port does. */
const SUPPRESS_EMBEDS = 1 << 2;
/** MessageFlags.IsVoiceMessage: the client draws the attachment as a voice message (player and waveform). */
export const IS_VOICE_MESSAGE = 1 << 13;

/** The file name Discord's own clients give a voice message. */
const VOICE_FILE_NAME = "voice-message.ogg";
/** The name of the plain audio file sent when a voice message is refused. */
const AUDIO_FILE_NAME = "answer.ogg";
/** Longest wait for the channel's write bucket before a spoken answer is dropped (it comes after the text). */
const MAX_VOICE_WAIT_MS = 15_000;
/** Discord's reactions route: one request per 0.25 s per channel (plus a margin for clock jitter). */
const REACTION_SPACING_MS = 300;

/** Never let model output notify anyone: not @everyone/@here, roles, users, or the replied-to author. */
const NO_MENTIONS = { parse: [] as string[], replied_user: false };

/** The shared REST client and presentation choices of the Discord reply port. */
export interface DiscordReplyPortFactoryOptions {
  rest: DiscordRestClient;
  /** Pacing before headers were seen (default 1000 ms). */
  defaultEditIntervalMs?: number;
  /** STATUS_REACTIONS: 🔧 / ✅ / ⚠️ on the user's message (default off). */
  statusReactions?: boolean;
}

/** The factory, plus what the rate-limit headers said, for a shared rate gate to use. */
export type DiscordReplyPortFactory = ReplyPortFactory & {
  /** Even spacing (ms) of sends/edits in a channel learnt from X-RateLimit-* headers; undefined before any. */
  observedIntervalMs(channelId: string): number | undefined;
};

/** Maps Discord's refusals of the content itself to the engine's typed error; everything else passes unchanged. */
function asPortError(error: unknown): unknown {
  if (error instanceof DiscordApiError) {
    // 50035 Invalid Form Body (e.g. over 2000) and 50006 empty message: the same text will fail again.
    if (error.status === 400 && (error.code === 50035 || error.code === 50006)) {
      return new RejectedContentError(error.message, { cause: error });
    }
    // 10008 Unknown Message: someone deleted the message we were editing; retrying cannot bring it back.
    if (error.status === 404 && error.code === 10008) return new RejectedContentError(error.message, { cause: error });
  }
  return error;
}

const rethrown = (error: unknown): never => {
  throw asPortError(error);
};

/** A refusal of the voice message itself (permission, size, metadata): a plain audio file may still go through. */
function refusedVoice(error: unknown): boolean {
  return error instanceof DiscordApiError && error.status >= 400 && error.status < 500 && error.status !== 401;
}

/** Creates the factory the worker uses to build one port per job. */
export function createDiscordReplyPortFactory(options: DiscordReplyPortFactoryOptions): DiscordReplyPortFactory {
  const { rest } = options;
  const fallbackInterval = options.defaultEditIntervalMs ?? DISCORD_DEFAULT_EDIT_INTERVAL_MS;

  const written = (content: RenderedText, opts: SendOptions) => ({
    content: content.text,
    allowed_mentions: NO_MENTIONS,
    flags: SUPPRESS_EMBEDS,
    // Only a message that is explicitly not final gets the Stop button; any other write clears it.
    components: opts.final === false ? [stopButtonRow()] : [],
  });

  // PUT and DELETE share the reactions bucket, but @discordjs/rest learns one per method: the first DELETE
  // after a PUT would get a 429, so they are spaced here.
  const lastReaction = new Map<string, number>();
  const reactionRequest = async (channelId: string, method: "PUT" | "DELETE", path: `/${string}`): Promise<void> => {
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const wait = (lastReaction.get(channelId) ?? 0) + REACTION_SPACING_MS - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      lastReaction.set(channelId, Date.now());
      try {
        await rest.request(method, path, {});
        return;
      } catch (error) {
        const failure = asPortError(error);
        if (!(failure instanceof RateLimitedError)) throw failure;
        lastReaction.set(channelId, Date.now() + failure.retryAfterMs);
      }
    }
  };

  const factory = (message: InboundMessage): ReplyPort => {
    if (message.platform !== "discord")
      throw new Error(`discord reply port asked to answer a ${message.platform} message`);
    const channelId = message.chatId;
    let toolsShown = false;
    let statusChain = Promise.resolve();
    // fail_if_not_exists: false — if the user deleted their question, still answer.
    const reference = {
      message_reference: { message_id: message.messageId, channel_id: channelId, fail_if_not_exists: false },
    };
    // The adapter's 👀 went out about now (from another process): the first change waits a bucket's length.
    if (options.statusReactions && !lastReaction.has(message.chatId)) lastReaction.set(message.chatId, Date.now());

    return {
      get limits() {
        return {
          maxLength: DISCORD_MAX_MESSAGE_LENGTH,
          minEditIntervalMs: rest.messageWriteIntervalMs(channelId) ?? fallbackInterval,
        };
      },

      format(markdown: string): RenderedText {
        const text = toDiscordMarkdown(markdown);
        // Discord refuses blank content (50006); an ellipsis keeps a placeholder valid.
        return { text: text.trim() === "" ? "…" : text };
      },

      async send(content, opts) {
        const body = { ...written(content, opts), ...(opts.continuation ? {} : reference) };
        const sent = await rest
          .request<{ id: string }>("POST", `/channels/${channelId}/messages`, { body, signal: opts.signal })
          .catch(rethrown);
        return sent.id;
      },

      async edit(messageId, content, opts) {
        const body = written(content, opts);
        await rest
          .request("PATCH", `/channels/${channelId}/messages/${messageId}`, { body, signal: opts.signal })
          .catch(rethrown);
      },

      ...(options.statusReactions && message.chatId !== message.messageId
        ? {
            // Not in a thread opened on the question (its id is the message's): that message lives in the parent channel.
            status(phase: ReplyPhase) {
              // One change at a time, in order: 🔧 (not awaited by the engine) before ✅.
              statusChain = statusChain.then(async () => {
                if (phase === "tools" && toolsShown) return;
                if (phase === "tools") toolsShown = true;
                const { add, remove } = reactionChange(phase);
                // Without the 🔧 of this attempt there is none to take away (a DELETE saved).
                const stale = remove.filter(
                  (emoji) => emoji !== STATUS_EMOJI.tools || toolsShown || phase === "failed",
                );
                try {
                  await reactionRequest(channelId, "PUT", ownReactionPath(channelId, message.messageId, add));
                  for (const emoji of stale)
                    await reactionRequest(channelId, "DELETE", ownReactionPath(channelId, message.messageId, emoji));
                } catch {
                  // Cosmetic: a missing reaction (deleted message, no permission) never fails a reply.
                }
              });
              return statusChain;
            },
          }
        : {}),

      async sendVoice(voice, { signal }) {
        // The channel's write bucket may still be spent by the text's last edits: wait it out once.
        const post = async (body: object, name?: string): Promise<string> => {
          const files = name ? [{ name, data: voice.bytes, contentType: "audio/ogg" }] : [];
          for (let attempt = 0; ; attempt++) {
            try {
              const sent = await rest.request<{ id: string }>("POST", `/channels/${channelId}/messages`, {
                body,
                files,
                signal,
              });
              return sent.id;
            } catch (error) {
              if (!(error instanceof RateLimitedError) || attempt > 0 || error.retryAfterMs > MAX_VOICE_WAIT_MS)
                throw error;
              await abortableSleep(error.retryAfterMs, signal);
            }
          }
        };
        let id: string;
        try {
          // A voice message carries no text: the file, its length and its waveform (base64 of up to 256 bytes).
          id = await post(
            {
              flags: IS_VOICE_MESSAGE,
              allowed_mentions: NO_MENTIONS,
              attachments: [
                {
                  id: "0",
                  filename: VOICE_FILE_NAME,
                  // Discord refuses a voice message without a positive duration.
                  duration_secs: Math.max(0.01, Math.round(voice.durationSeconds * 100) / 100),
                  waveform: Buffer.from(voice.waveform).toString("base64"),
                },
              ],
              ...reference,
            },
            VOICE_FILE_NAME,
          );
        } catch (error) {
          if (!refusedVoice(error)) throw error;
          // Refused as a voice message: the same audio as a plain file plays in every client, caption included.
          return post(
            {
              content: voice.caption ?? "",
              allowed_mentions: NO_MENTIONS,
              flags: SUPPRESS_EMBEDS,
              attachments: [{ id: "0", filename: AUDIO_FILE_NAME }],
              ...reference,
            },
            AUDIO_FILE_NAME,
          );
        }
        // A voice message cannot carry the caption: it follows as a line of its own (a failure is the caller's to log).
        if (voice.caption)
          await post({ content: voice.caption, allowed_mentions: NO_MENTIONS, flags: SUPPRESS_EMBEDS });
        return id;
      },

      async typing({ signal }) {
        try {
          await rest.request("POST", `/channels/${channelId}/typing`, { signal });
        } catch (error) {
          // Best effort: a missing typing indicator must never fail a reply; only cancellation propagates.
          if (signal?.aborted) throw error;
        }
      },
    };
  };

  return Object.assign(factory, { observedIntervalMs: (channelId: string) => rest.messageWriteIntervalMs(channelId) });
}
