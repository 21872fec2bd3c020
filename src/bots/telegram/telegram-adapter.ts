/**
 * The Telegram adapter: receives updates, offers the questions to the queue, and answers commands,
 * refusals and access denials itself; the model's answers go through the worker's reply port.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { Bot, GrammyError, HttpError, type Context } from "grammy";
import type { InlineKeyboardMarkup, Message, UserFromGetMe } from "grammy/types";
import { sequentialize } from "@grammyjs/runner";
import type { BotGateway, EnqueueResult } from "../../contracts/bot-gateway.js";
import type { InboundMessage } from "../../contracts/inbound-message.js";
import { TELEGRAM_STATUS_EMOJI } from "./telegram-status-reactions.js";
import { classifyTelegramMessage, type TelegramCommand } from "./telegram-addressing.js";
import { telegramConversationKey, topicOf } from "./telegram-conversation.js";
import { toInboundMessage } from "./telegram-inbound.js";
import { retryAfterTransformer } from "./retry-after-transformer.js";
import { abortableSleep } from "../../shared/abortable-sleep.js";
import { STOP_CALLBACK_DATA } from "./telegram-reply-port.js";
import {
  createTelegramLifecycle,
  errorText,
  type TelegramLifecycleOptions,
  type TelegramLogger,
} from "./telegram-lifecycle.js";
import { telegramClientOptions } from "./telegram-client.js";
import { isSettingsCommand, type SettingsPort } from "../../contracts/settings-port.js";
import { createChatAdminCheck } from "./telegram-chat-admins.js";
import { createTelegramSettingsUi } from "./telegram-settings.js";

/** Options of the adapter (with how it receives: telegram-lifecycle.ts). */
export interface TelegramAdapterOptions extends TelegramLifecycleOptions {
  /** The grammY Bot to receive with (built by the composition root); default: one for `token` and `apiRoot`. */
  bot?: Bot;
  /** Bot API root, e.g. https://api.telegram.org (grammY `client.apiRoot`). */
  apiRoot: string;
  gateway: BotGateway;
  /** The settings commands (/settings, /model, …); without it they are unknown commands. */
  settings?: SettingsPort;
  /** Chat ids that may use the bot; empty = all. */
  allowedChats: readonly string[];
  /** User ids that may use the bot; empty = all. Both lists must admit a message. */
  allowedUsers: readonly string[];
  /** Longer questions are refused politely instead of queued. */
  maxInputChars: number;
  /** MAX_IMAGE_BYTES: of a photo's sizes, the largest within this is queued. */
  maxImageBytes?: number;
  logger?: TelegramLogger;
  /** Backoff while the queue refuses to take a message (Redis down); default 250 ms doubling to 5 s. */
  enqueueRetry?: { initialDelayMs?: number; maxDelayMs?: number };
  /** STATUS_REACTIONS: 👀 on a question once it is queued (the worker replaces it with 👨‍💻, 👌 or 😢). */
  statusReactions?: boolean;
  now?: () => number;
}

/** A running (or startable) Telegram adapter. */
export interface TelegramAdapter {
  /** Connects (getMe), registers commands, then polls or sets the webhook. Rejects on a bad token. */
  start(): Promise<void>;
  /** Stops receiving; updates not yet enqueued stay unconfirmed at Telegram and come again. */
  stop(): Promise<void>;
  /** The bot's identity once started. */
  readonly botInfo: UserFromGetMe | undefined;
  /** Node HTTP handler for webhook mode (answers 500 when a message could not be enqueued, so Telegram retries). */
  handleWebhook(req: IncomingMessage, res: ServerResponse): Promise<void>;
}

/** The command menu registered with setMyCommands. */
export const TELEGRAM_COMMANDS = [
  { command: "ask", description: "Ask a question (in groups)" },
  { command: "reset", description: "Forget this conversation (settings stay)" },
  { command: "compact", description: "Fold older messages into a short summary" },
  { command: "stop", description: "Stop the answer being written" },
  { command: "help", description: "How to use this bot" },
  { command: "start", description: "Start talking to the bot" },
] as const;

/** The settings commands of the menu, registered when the adapter has the settings port. */
export const TELEGRAM_SETTINGS_COMMANDS = [
  { command: "settings", description: "This chat's settings" },
  { command: "model", description: "Show or switch the model" },
  { command: "think", description: "Thinking on or off" },
  { command: "reasoning", description: "Show reasoning: off, collapsed or full" },
  { command: "persona", description: "Set or reset a persona for this chat" },
  { command: "tools", description: "Switch tools on or off" },
  { command: "timezone", description: "Show or set this chat's time zone" },
  { command: "voice", description: "Spoken answers: off, on or auto" },
  { command: "remind", description: "Remind: /remind in 20 minutes stretch" },
  { command: "schedules", description: "This chat's schedules, to cancel them" },
] as const;

const silentLogger: TelegramLogger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};

/** Creates the adapter; nothing talks to Telegram until start(). */
export function createTelegramAdapter(opts: TelegramAdapterOptions): TelegramAdapter {
  const log = opts.logger ?? silentLogger;
  const now = opts.now ?? Date.now;
  const stopping = new AbortController();
  const bot = opts.bot ?? new Bot(opts.token, { client: telegramClientOptions(opts.apiRoot) });

  // The adapter's own answers wait out short 429s; getUpdates has its own loop in grammY.
  bot.api.config.use(retryAfterTransformer({ maxAttempts: 3, maxDelayMs: 30_000, skipMethods: ["getUpdates"] }));
  bot.api.config.use(async (prev, method, payload, signal) => {
    try {
      const result = await prev(method, payload, signal);
      if (!result.ok)
        log.warn({ method, code: result.error_code, description: result.description }, "Telegram API call failed");
      return result;
    } catch (err) {
      if (!signal?.aborted) log.warn({ method, err: errorText(err) }, "Telegram API unreachable");
      throw err;
    }
  });

  const allowed = (chatId: number, userId: number | undefined): boolean =>
    (opts.allowedChats.length === 0 || opts.allowedChats.includes(String(chatId))) &&
    (opts.allowedUsers.length === 0 || (userId !== undefined && opts.allowedUsers.includes(String(userId))));

  /**
   * A short non-model answer under the user's message. It counts against the user's per-minute limit first
   * (`counted`: the limiter refused this very message; `outsider`: one a minute), so a flood cannot spend
   * the bot's send budget.
   */
  const answer = async (
    ctx: Context,
    message: Message,
    text: string,
    markup?: InlineKeyboardMarkup,
    kind: "reply" | "counted" | "outsider" = "reply",
  ): Promise<void> => {
    const thread = topicOf(message);
    const userId = message.from?.id;
    const { gateway } = opts;
    // Waits for the chat's shared budget (an answer may be streaming there) without holding up later updates.
    void bestEffort(
      (async () => {
        const limited = kind !== "counted" && gateway.mayReply && userId !== undefined;
        if (limited && !(await gateway.mayReply!("telegram", String(userId), { outsider: kind === "outsider" })))
          return;
        await gateway.replySlot?.("telegram", String(message.chat.id));
        return ctx.api.sendMessage(message.chat.id, text, {
          ...(thread !== undefined ? { message_thread_id: thread } : {}),
          reply_parameters: { message_id: message.message_id, allow_sending_without_reply: true },
          link_preview_options: { is_disabled: true },
          ...(markup ? { reply_markup: markup } : {}),
        });
      })(),
    ).catch((err: unknown) => log.warn({ err: errorText(err), chatId: message.chat.id }, "courtesy reply failed"));
  };

  /** Offers a message to the queue until it is taken; only stop() ends the attempts (the update then stays unconfirmed). */
  const enqueueDurably = async (message: InboundMessage): Promise<EnqueueResult> => {
    let delay = opts.enqueueRetry?.initialDelayMs ?? 250;
    const maxDelay = opts.enqueueRetry?.maxDelayMs ?? 5000;
    for (;;) {
      try {
        return await opts.gateway.enqueue(message);
      } catch (err) {
        // In webhook mode Telegram itself redelivers after our 500; in polling mode we are the retry.
        if (stopping.signal.aborted || opts.webhook) throw err;
        log.warn(
          { err: errorText(err), chatId: message.chatId, messageId: message.messageId, retryInMs: delay },
          "enqueue failed; retrying",
        );
        await abortableSleep(delay, stopping.signal);
        delay = Math.min(delay * 2, maxDelay);
      }
    }
  };

  const settingsUi = opts.settings
    ? createTelegramSettingsUi({
        settings: opts.settings,
        isAdmin: createChatAdminCheck({ api: bot.api, logger: log }),
        replySlot: (chatId) => opts.gateway.replySlot?.("telegram", chatId) ?? Promise.resolve(),
      })
    : undefined;

  const runCommand = async (
    ctx: Context,
    message: Message,
    command: TelegramCommand | "unknown",
    name: string,
    args: string,
  ): Promise<void> => {
    const key = telegramConversationKey(message.chat.id, topicOf(message));
    const isPrivate = message.chat.type === "private";
    const help = helpText(ctx.me.username, isPrivate);
    const say = (text: string, markup?: InlineKeyboardMarkup) => answer(ctx, message, text, markup);
    /** Runs `action`; a failure is logged as `failed` and answered with `sorry`. */
    const orSorry = async (action: () => Promise<unknown>, failed: string, sorry: string, fields = {}) => {
      try {
        await action();
      } catch (err) {
        log.error({ err: errorText(err), key, ...fields }, failed);
        await say(sorry);
      }
    };
    if (isSettingsCommand(command) && settingsUi) {
      return orSorry(
        async () => {
          const reply = await settingsUi.command(message, command, args);
          await say(reply.text, reply.markup);
        },
        "settings command failed",
        "Sorry, I could not read or change the settings just now. Please try again in a moment.",
        { command },
      );
    }
    switch (command) {
      case "start":
        return say(`👋 Hi! ${help}`);
      case "help":
        return say(help);
      case "reset":
        return orSorry(
          async () => {
            await opts.gateway.reset(key);
            await say(RESET_DONE_TEXT);
          },
          "reset failed",
          "Sorry, I could not reset the conversation just now. Please try again in a moment.",
        );
      case "compact":
        if (!opts.gateway.compact) return say(help);
        return orSorry(
          async () => say(await opts.gateway.compact!(key, { shared: !isPrivate })),
          "compact failed",
          "Sorry, I could not compact the conversation just now. Please try again in a moment.",
        );
      case "stop":
        // A stopped answer ends with the worker's own "⏹ stopped" note: a second message now would
        // only break the chat's one-message-a-second budget.
        return orSorry(
          async () => {
            if (!(await opts.gateway.stop(key))) await say("Nothing to stop: I am not writing an answer here.");
          },
          "stop failed",
          "Sorry, I could not stop the answer just now.",
        );
      default:
        return say(`I don't know the command /${name}.\n\n${help}`);
    }
  };

  const onMessage = async (ctx: Context): Promise<void> => {
    const message = ctx.message as Message;
    const verdict = classifyTelegramMessage(message, ctx.me);
    if (verdict.kind === "ignore") {
      log.debug({ chatId: message.chat.id, messageId: message.message_id, reason: verdict.reason }, "ignored");
      return;
    }
    if (!allowed(message.chat.id, message.from?.id)) {
      log.info({ chatId: message.chat.id, userId: message.from?.id }, "not on the allow lists");
      // Groups are ignored silently; a private chat gets told once per message.
      if (message.chat.type === "private")
        await answer(ctx, message, "Sorry, this bot is private and not available to you.", undefined, "outsider");
      return;
    }
    switch (verdict.kind) {
      case "command":
        return runCommand(ctx, message, verdict.command, verdict.name, verdict.args);
      case "empty-question":
        return answer(ctx, message, `What would you like to ask? For example: /ask What's the weather in Paris?`);
      case "question": {
        // Characters as people count them (code points, like the Discord adapter), not UTF-16 units: an emoji is one.
        const length = [...verdict.text].length;
        if (length > opts.maxInputChars) {
          return answer(
            ctx,
            message,
            `Sorry, that message is too long for me (${length} characters; the limit is ${opts.maxInputChars}). Please shorten it.`,
          );
        }
        const inbound: InboundMessage = {
          ...toInboundMessage(message, verdict.text, now(), opts.maxImageBytes),
          typingOnReceipt: true,
        };
        const result = await enqueueDurably(inbound);
        log.debug(
          { chatId: inbound.chatId, messageId: inbound.messageId, status: result.status },
          "offered to the queue",
        );
        if (result.status === "queued") {
          // The first signs of life, before a worker picks the job up; cosmetic, so nothing waits for them.
          const thread = topicOf(message);
          ctx.api
            .sendChatAction(message.chat.id, "typing", thread !== undefined ? { message_thread_id: thread } : {})
            .catch((err: unknown) =>
              log.debug({ err: errorText(err), chatId: message.chat.id }, "typing indicator failed"),
            );
          if (opts.statusReactions)
            ctx.api
              .setMessageReaction(message.chat.id, message.message_id, [
                { type: "emoji", emoji: TELEGRAM_STATUS_EMOJI.queued },
              ])
              .catch((err: unknown) =>
                log.debug({ err: errorText(err), chatId: message.chat.id }, "status reaction failed"),
              );
        }
        if (result.status === "refused" && result.reason !== undefined)
          await answer(ctx, message, result.reason, undefined, "counted");
        return;
      }
    }
  };

  const onCallbackQuery = async (ctx: Context): Promise<void> => {
    const query = ctx.callbackQuery;
    if (!query) return;
    const message = query.message;
    const isStop = query.data === STOP_CALLBACK_DATA;
    if (!message || !("chat" in message) || (!isStop && !settingsUi)) return bestEffort(ctx.answerCallbackQuery());
    if (!allowed(message.chat.id, query.from.id))
      return bestEffort(ctx.answerCallbackQuery({ text: "Not available to you." }));
    if (!isStop) {
      try {
        if (await settingsUi?.press(ctx)) return;
      } catch (err) {
        log.error({ err: errorText(err), chatId: message.chat.id }, "settings button failed");
        return bestEffort(ctx.answerCallbackQuery({ text: "Could not change the settings right now." }));
      }
      return bestEffort(ctx.answerCallbackQuery());
    }
    const key = telegramConversationKey(
      message.chat.id,
      "is_topic_message" in message ? topicOf(message as Message) : undefined,
    );
    let text: string;
    try {
      text = (await opts.gateway.stop(key)) ? "⏹ Stopping…" : "Nothing to stop.";
    } catch (err) {
      log.error({ err: errorText(err), key }, "stop (button) failed");
      text = "Could not stop right now.";
    }
    await bestEffort(ctx.answerCallbackQuery({ text }));
  };

  const onDraftStopped = async (ctx: Context): Promise<void> => {
    const stopped = ctx.update.stopped_message_generation;
    if (!stopped) return;
    if (!allowed(stopped.chat.id, stopped.chat.id)) return;
    const key = telegramConversationKey(stopped.chat.id, stopped.message_thread_id);
    try {
      await opts.gateway.stop(key);
    } catch (err) {
      log.error({ err: errorText(err), key }, "stop (draft) failed");
    }
  };

  // One chat's updates are handled in order (questions must reach the queue in the order they were asked).
  bot.use(sequentialize((ctx: Context) => (ctx.chat ? String(ctx.chat.id) : undefined) as string));
  bot.on("message", onMessage);
  bot.on("callback_query", onCallbackQuery);
  bot.on("stopped_message_generation", onDraftStopped);

  const lifecycle = createTelegramLifecycle({
    bot,
    opts,
    log,
    stopping,
    commands: [...TELEGRAM_COMMANDS, ...(settingsUi ? TELEGRAM_SETTINGS_COMMANDS : [])],
  });
  return {
    get botInfo() {
      return bot.isInited() ? bot.botInfo : undefined;
    },
    handleWebhook: lifecycle.handleWebhook,
    start: lifecycle.start,
    stop: lifecycle.stop,
  };
}

function helpText(username: string, isPrivate: boolean): string {
  const ask = isPrivate
    ? "Just write your question and I will answer."
    : `In this group, mention me (@${username} your question), reply to one of my messages, or use /ask your question.`;
  return `${ask}

/reset forgets this conversation
/compact folds older messages into a short summary
/stop stops the answer being written
/settings shows this chat's settings (/model, /think, /reasoning, /persona, /tools)
/voice off|on|auto chooses when answers are also spoken (auto: a voice note gets a voice answer)
/help shows this message`;
}

/** The answer to `/reset`: the history goes, the settings stay. */
export const RESET_DONE_TEXT =
  "🧹 Done: I forgot this conversation. Its settings stay (/settings reset restores the defaults).";

/** Runs a best-effort call (courtesy replies, callback answers): API and network failures are already logged by the API transformer. */
async function bestEffort(call: Promise<unknown>): Promise<void> {
  try {
    await call;
  } catch (err) {
    if (!(err instanceof GrammyError || err instanceof HttpError)) throw err;
  }
}
