/**
 * Telegram as the reply engine sees it (ReplyPort), through a grammY `Api`: workers stream answers without
 * receiving updates. Errors are mapped here: 429 → RateLimitedError, "not modified" → success, "can't parse
 * entities" → the text again as plain Markdown (never lose an answer to a rendering bug), content Telegram
 * never accepts → RejectedContentError, network failures and 5xx → rethrown for retry.
 */
import { GrammyError, HttpError, InputFile, type Api } from "grammy";
import type { InlineKeyboardMarkup } from "grammy/types";
import {
  RateLimitedError,
  RejectedContentError,
  type RenderedText,
  type ReplyPort,
  type ReplyPortFactory,
  type SendOptions,
} from "../../contracts/reply-port.js";
import type { InboundMessage } from "../../contracts/inbound-message.js";
import { markdownToTelegramHtml, telegramVisibleText } from "./telegram-html.js";
import { cutTextWithMarker } from "../../shared/text-cut.js";
import { createReactionPacer, TELEGRAM_STATUS_EMOJI } from "./telegram-status-reactions.js";
import {
  TELEGRAM_DRAFT_INTERVAL_MS,
  TELEGRAM_GROUP_EDIT_INTERVAL_MS,
  TELEGRAM_PRIVATE_EDIT_INTERVAL_MS,
} from "./telegram-pacing.js";

/** callback_data of the Stop button; the adapter answers it with gateway.stop. */
export const STOP_CALLBACK_DATA = "stop";

/** Telegram's limit: 4096 characters of visible text, counted after entity parsing. */
export const TELEGRAM_MAX_MESSAGE_LENGTH = 4096;

/** Options of the port factory. */
export interface TelegramReplyPortOptions {
  /** A grammY Api (`new Api(token, { apiRoot })`). */
  api: Api;
  /** Stream private-chat answers as drafts (sendMessageDraft, Bot API 9.5+) instead of placeholder + edits. */
  useDrafts: boolean;
  /** Markdown → Telegram HTML; default markdownToTelegramHtml. */
  toHtml?: (markdown: string) => string;
  /** STATUS_REACTIONS: 👨‍💻 / 👌 / 😢 on the user's message (default off). */
  statusReactions?: boolean;
}

const PARSE_FAILURE = /can't parse entities/i;
const NOT_MODIFIED = /message is not modified/i;
/** Refusals that the same request will never get past. */
const REJECTED = [
  NOT_MODIFIED,
  /message is too long/i,
  /text must be non-empty/i,
  /message text is empty/i,
  /message to edit not found/i,
  /message can't be edited/i,
  /TEXTDRAFT_PEER_INVALID/,
  /can't parse entities/i,
];
const STOP_KEYBOARD: InlineKeyboardMarkup = {
  inline_keyboard: [[{ text: "⏹ Stop", callback_data: STOP_CALLBACK_DATA }]],
};
/** grammY's Node build types its signals with the abort-controller polyfill; at runtime it takes the standard one. */
type GrammySignal = Parameters<Api["sendMessage"]>[3];
const grammySignal = (signal: AbortSignal | undefined) => signal as unknown as GrammySignal;

/** How many rendered texts a port remembers the Markdown source of (for the plain-text fallback). */
const SOURCE_MEMORY = 64;

/** Creates the factory the worker uses to build one port per Telegram job. */
export function createTelegramReplyPortFactory(opts: TelegramReplyPortOptions): ReplyPortFactory {
  // One pacer for every job of this worker: the reactions of a chat are spaced across its answers.
  const reactions = opts.statusReactions ? createReactionPacer() : undefined;
  return (message) => createTelegramReplyPort(opts, message, reactions);
}

function createTelegramReplyPort(
  opts: TelegramReplyPortOptions,
  message: InboundMessage,
  reactions: ReturnType<typeof createReactionPacer> | undefined,
): ReplyPort {
  if (message.platform !== "telegram")
    throw new Error(`Telegram reply port asked to answer a ${message.platform} message`);
  const { api } = opts;
  const chatId = Number(message.chatId);
  const threadId = message.threadId !== undefined ? Number(message.threadId) : undefined;
  const inThread = threadId !== undefined ? { message_thread_id: threadId } : {};
  const isPrivate = message.chatType === "private";
  const replyTo = { message_id: Number(message.messageId), allow_sending_without_reply: true };
  const keepMention = message.author.username;
  const toHtml =
    opts.toHtml ?? ((markdown: string) => markdownToTelegramHtml(markdown, keepMention ? { keepMention } : {}));
  const sources = new Map<string, string>();

  // A "⏹ Stop" button while the answer is being written.
  const markupFor = (o: SendOptions) => (o.final === false ? { reply_markup: STOP_KEYBOARD } : {});

  /** Runs a call with the rendered text; on a parse failure once more as plain text. Errors come back mapped. */
  const withPlainFallback = async <T>(
    content: RenderedText,
    call: (text: string, parseMode: "HTML" | undefined) => Promise<T>,
  ): Promise<T> => {
    try {
      return await call(content.text, content.parseMode);
    } catch (err) {
      const unparsable = err instanceof GrammyError && err.error_code === 400 && PARSE_FAILURE.test(err.description);
      if (!content.parseMode || !unparsable) throw mapError(err);
    }
    // The model's Markdown, else the HTML's visible text, cut in whole characters (Telegram counts UTF-16 units).
    const plain = sources.get(content.text) ?? telegramVisibleText(content.text);
    try {
      return await call(cutTextWithMarker(plain, TELEGRAM_MAX_MESSAGE_LENGTH - 1, "…"), undefined);
    } catch (err) {
      throw mapError(err);
    }
  };

  const port: ReplyPort = {
    limits: {
      maxLength: TELEGRAM_MAX_MESSAGE_LENGTH,
      minEditIntervalMs: isPrivate ? TELEGRAM_PRIVATE_EDIT_INTERVAL_MS : TELEGRAM_GROUP_EDIT_INTERVAL_MS,
      ...(opts.useDrafts && isPrivate ? { draftIntervalMs: TELEGRAM_DRAFT_INTERVAL_MS } : {}),
    },

    format(markdown) {
      const text = toHtml(markdown);
      sources.delete(text);
      sources.set(text, markdown);
      if (sources.size > SOURCE_MEMORY) sources.delete(sources.keys().next().value as string);
      return { text, parseMode: "HTML" };
    },

    visibleText: (content) => (content.parseMode === "HTML" ? telegramVisibleText(content.text) : content.text),

    async send(content, o) {
      const sent = await withPlainFallback(content, (text, parseMode) =>
        api.sendMessage(
          chatId,
          text,
          {
            ...(parseMode ? { parse_mode: parseMode } : {}),
            ...inThread,
            // Only the first message of a reply answers the user's message; continuations just follow it.
            ...(o.continuation ? {} : { reply_parameters: replyTo }),
            link_preview_options: { is_disabled: true },
            ...markupFor(o),
          },
          grammySignal(o.signal),
        ),
      );
      return String(sent.message_id);
    },

    async edit(messageId, content, o) {
      try {
        await withPlainFallback(content, (text, parseMode) =>
          api.editMessageText(
            chatId,
            Number(messageId),
            text,
            {
              ...(parseMode ? { parse_mode: parseMode } : {}),
              link_preview_options: { is_disabled: true },
              // Leaving reply_markup out removes the Stop button: that is what `final` asks for.
              ...markupFor(o),
            },
            grammySignal(o.signal),
          ),
        );
      } catch (err) {
        if (err instanceof RejectedContentError && NOT_MODIFIED.test(err.message)) return;
        throw err;
      }
    },

    async typing(o) {
      try {
        await api.sendChatAction(chatId, "typing", inThread, grammySignal(o.signal));
      } catch (err) {
        // The indicator is cosmetic; the answer itself will report real trouble.
        if (!(err instanceof GrammyError || err instanceof HttpError)) throw err;
      }
    },

    async sendVoice(voice, o) {
      const sent = await api.sendVoice(
        chatId,
        new InputFile(voice.bytes, "answer.ogg"),
        {
          ...inThread,
          duration: Math.max(1, Math.round(voice.durationSeconds)),
          ...(voice.caption ? { caption: voice.caption } : {}),
          reply_parameters: replyTo,
        },
        grammySignal(o.signal),
      );
      return String(sent.message_id);
    },
  };

  if (reactions) {
    // The adapter's 👀 went out about now (from another process): the first change keeps its distance.
    reactions.noteElsewhere(message.chatId);
    let toolsShown = false;
    let chain = Promise.resolve();
    const retryAfterMs = (err: unknown) =>
      err instanceof GrammyError && err.error_code === 429 ? (err.parameters.retry_after ?? 1) * 1000 : undefined;
    port.status = (phase) => {
      // One change at a time, in order: 👨‍💻 (not awaited by the engine) before 👌.
      chain = chain.then(async () => {
        if (phase === "tools" && toolsShown) return;
        if (phase === "tools") toolsShown = true;
        try {
          await reactions.run(
            message.chatId,
            async () => {
              // Replaces the bot's reaction on the message: the one before goes in the same request.
              await api.setMessageReaction(chatId, Number(message.messageId), [
                { type: "emoji", emoji: TELEGRAM_STATUS_EMOJI[phase] },
              ]);
            },
            retryAfterMs,
          );
        } catch {
          // Cosmetic: a missing reaction (deleted message, reactions not allowed in the chat) never fails a reply.
        }
      });
      return chain;
    };
  }

  if (opts.useDrafts && isPrivate) {
    port.draft = async (draftId, content, o) => {
      await withPlainFallback(content, (text, parseMode) =>
        api.sendMessageDraft(
          chatId,
          draftId,
          text,
          {
            ...(parseMode ? { parse_mode: parseMode } : {}),
            ...inThread,
            // The draft's own stop button; pressing it arrives as stopped_message_generation.
            can_stop: true,
            keep_on_stop: true,
          },
          grammySignal(o.signal),
        ),
      );
    };
  }
  return port;
}

function mapError(err: unknown): unknown {
  if (!(err instanceof GrammyError)) return err; // HttpError and friends: the caller retries.
  if (err.error_code === 429) return new RateLimitedError((err.parameters.retry_after ?? 1) * 1000, err.description);
  if (err.error_code === 400 && REJECTED.some((re) => re.test(err.description)))
    return new RejectedContentError(err.description);
  return err;
}
