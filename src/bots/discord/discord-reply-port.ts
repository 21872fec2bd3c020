/**
 * Discord as the reply engine sees it: REST only (a worker needs no gateway connection), one
 * port per job. Every message carries `allowed_mentions: { parse: [] }` so model output pings
 * no one; the first message of a reply threads under the user's message; pacing comes from the
 * X-RateLimit-* headers (5 writes per 5 s per channel today) and a 429 surfaces as
 * RateLimitedError with Discord's exact retry_after, for our own editor to honour.
 */
import type { InboundMessage } from "../../contracts/inbound-message.js";
import { toDiscordMarkdown } from "./discord-markdown.js";
import {
  RejectedContentError,
  type RenderedText,
  type ReplyPort,
  type ReplyPortFactory,
  type SendOptions,
} from "../../contracts/reply-port.js";
import { DiscordApiError, type DiscordRestClient } from "./discord-rest-client.js";
import { stopButtonRow } from "./discord-stop-button.js";
import { DISCORD_DEFAULT_EDIT_INTERVAL_MS } from "./discord-pacing.js";

/** Discord's per-message limit, in characters (Discord counts code points; UTF-16 length is never less). */
export const DISCORD_MAX_MESSAGE_LENGTH = 2000;

const SUPPRESS_EMBEDS = 1 << 2;

/** Never let model output notify anyone: not @everyone/@here, roles, users, or the replied-to author. */
const NO_MENTIONS = { parse: [] as string[], replied_user: false };

/** The shared REST client and presentation choices of the Discord reply port. */
export interface DiscordReplyPortFactoryOptions {
  rest: DiscordRestClient;
  /** Show a Stop button on messages still being written (default true). */
  stopButton?: boolean;
  /** Suppress link previews in replies, as the Telegram port does (default true). */
  suppressEmbeds?: boolean;
  /** Pacing before headers were seen (default 1000 ms). */
  defaultEditIntervalMs?: number;
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

/** Creates the factory the worker uses to build one port per job. */
export function createDiscordReplyPortFactory(options: DiscordReplyPortFactoryOptions): DiscordReplyPortFactory {
  const { rest } = options;
  const withStopButton = options.stopButton ?? true;
  const flags = options.suppressEmbeds === false ? 0 : SUPPRESS_EMBEDS;
  const fallbackInterval = options.defaultEditIntervalMs ?? DISCORD_DEFAULT_EDIT_INTERVAL_MS;

  // Only a message that is explicitly not final gets the button; any other write clears it.
  const componentsFor = (opts: SendOptions) => (withStopButton && opts.final === false ? [stopButtonRow()] : []);

  const factory = (message: InboundMessage): ReplyPort => {
    if (message.platform !== "discord")
      throw new Error(`discord reply port asked to answer a ${message.platform} message`);
    const channelId = message.chatId;

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
        const body = {
          content: content.text,
          allowed_mentions: NO_MENTIONS,
          flags,
          components: componentsFor(opts),
          // fail_if_not_exists: false — if the user deleted their question, still answer.
          ...(opts.continuation
            ? {}
            : {
                message_reference: { message_id: message.messageId, channel_id: channelId, fail_if_not_exists: false },
              }),
        };
        try {
          const sent = await rest.request<{ id: string }>("POST", `/channels/${channelId}/messages`, {
            body,
            signal: opts.signal,
          });
          return sent.id;
        } catch (error) {
          throw asPortError(error);
        }
      },

      async edit(messageId, content, opts) {
        const body = { content: content.text, allowed_mentions: NO_MENTIONS, flags, components: componentsFor(opts) };
        try {
          await rest.request("PATCH", `/channels/${channelId}/messages/${messageId}`, { body, signal: opts.signal });
        } catch (error) {
          throw asPortError(error);
        }
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
