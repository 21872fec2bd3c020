/**
 * The Telegram adapter: receives updates (long polling, or a webhook), decides which
 * messages are questions for the bot, and offers those to the queue through the
 * BotGateway. It answers commands, refusals and access denials itself (they are not
 * model answers); everything the model says goes through the reply port in the worker.
 */
import { createHash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { Bot, GrammyError, HttpError, type Context } from "grammy";
import type { Message, UserFromGetMe } from "grammy/types";
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
import { createTelegramLifecycle, type TelegramLifecycleOptions, type TelegramLogger } from "./telegram-lifecycle.js";
import { telegramClientOptions } from "./telegram-client.js";
import { isSettingsCommand, type SettingsPort } from "../../contracts/settings-port.js";
import { createChatAdminCheck } from "./telegram-chat-admins.js";
import { createTelegramSettingsUi } from "./telegram-settings.js";
import type { InlineKeyboardMarkup } from "grammy/types";

/** Options of the adapter (with how it receives: telegram-lifecycle.ts). */
export interface TelegramAdapterOptions extends TelegramLifecycleOptions {
  token: string;
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

/** Update types the adapter acts on; everything else is not even fetched. */
export { TELEGRAM_ALLOWED_UPDATES } from "./telegram-lifecycle.js";

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
  const webhookSecret = opts.webhook
    ? (opts.webhook.secretToken ?? createHash("sha256").update(`webhook:${opts.token}`).digest("hex"))
    : undefined;
  const stopping = new AbortController();
  // The client is the composition root's to build (discord.js style); a default one for callers that only have a token.
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
   * Sends a short non-model answer under the user's message, in its topic. It counts against the
   * user's per-minute limit first (`counted`: the limiter itself refused this message, so it was
   * counted already; `outsider`: at most one a minute), so a flood cannot spend the bot's send budget.
   */
  const answer = async (
    ctx: Context,
    message: Message,
    text: string,
    markup?: InlineKeyboardMarkup,
    kind: CourtesyKind = "reply",
  ): Promise<void> => {
    const thread = topicOf(message);
    // A courtesy reply waits for the chat's shared budget (an answer may be streaming there), but it
    // must neither hold up the updates behind it nor be lost silently: it runs on its own.
    void bestEffort(
      (async () => {
        if (!(await mayAnswer(opts.gateway, message, kind))) return;
        await opts.gateway.replySlot?.("telegram", String(message.chat.id));
        return ctx.api.sendMessage(message.chat.id, text, {
          ...(thread !== undefined ? { message_thread_id: thread } : {}),
          reply_parameters: { message_id: message.message_id, allow_sending_without_reply: true },
          link_preview_options: { is_disabled: true },
          ...(markup ? { reply_markup: markup } : {}),
        });
      })(),
    ).catch((err: unknown) => log.warn({ err: errorText(err), chatId: message.chat.id }, "courtesy reply failed"));
  };

  /**
   * The first sign of life, as soon as the question is queued: it does not wait for a worker to pick
   * the job up (the worker shows it again if it starts after the indicator faded). Cosmetic, so it
   * neither holds up the next update nor fails anything.
   */
  const showTyping = (ctx: Context, message: Message): void => {
    const thread = topicOf(message);
    ctx.api
      .sendChatAction(message.chat.id, "typing", thread !== undefined ? { message_thread_id: thread } : {})
      .catch((err: unknown) => log.debug({ err: errorText(err), chatId: message.chat.id }, "typing indicator failed"));
  };

  /** 👀 on a queued question (STATUS_REACTIONS); cosmetic like the typing indicator, nothing waits for it. */
  const showQueued = (ctx: Context, message: Message): void => {
    if (!opts.statusReactions) return;
    ctx.api
      .setMessageReaction(message.chat.id, message.message_id, [{ type: "emoji", emoji: TELEGRAM_STATUS_EMOJI.queued }])
      .catch((err: unknown) => log.debug({ err: errorText(err), chatId: message.chat.id }, "status reaction failed"));
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
    if (isSettingsCommand(command)) {
      if (!settingsUi)
        return answer(ctx, message, `I don't know the command /${name}.\n\n${helpText(ctx.me.username, isPrivate)}`);
      try {
        const reply = await settingsUi.command(message, command, args);
        return answer(ctx, message, reply.text, reply.markup);
      } catch (err) {
        log.error({ err: errorText(err), key, command }, "settings command failed");
        return answer(
          ctx,
          message,
          "Sorry, I could not read or change the settings just now. Please try again in a moment.",
        );
      }
    }
    switch (command) {
      case "start":
        return answer(ctx, message, `👋 Hi! ${helpText(ctx.me.username, isPrivate)}`);
      case "help":
        return answer(ctx, message, helpText(ctx.me.username, isPrivate));
      case "reset":
        try {
          await opts.gateway.reset(key);
          return answer(ctx, message, RESET_DONE_TEXT);
        } catch (err) {
          log.error({ err: errorText(err), key }, "reset failed");
          return answer(
            ctx,
            message,
            "Sorry, I could not reset the conversation just now. Please try again in a moment.",
          );
        }
      case "compact":
        if (!opts.gateway.compact) return answer(ctx, message, helpText(ctx.me.username, isPrivate));
        try {
          return answer(ctx, message, await opts.gateway.compact(key, { shared: !isPrivate }));
        } catch (err) {
          log.error({ err: errorText(err), key }, "compact failed");
          return answer(
            ctx,
            message,
            "Sorry, I could not compact the conversation just now. Please try again in a moment.",
          );
        }
      case "stop":
        try {
          const stopped = await opts.gateway.stop(key);
          // A stopped answer ends with its own "⏹ stopped" note, sent by the worker at that very moment:
          // a second message now would only break the chat's one-message-a-second budget.
          if (stopped) return;
          return answer(ctx, message, "Nothing to stop: I am not writing an answer here.");
        } catch (err) {
          log.error({ err: errorText(err), key }, "stop failed");
          return answer(ctx, message, "Sorry, I could not stop the answer just now.");
        }
      case "unknown":
        return answer(ctx, message, `I don't know the command /${name}.\n\n${helpText(ctx.me.username, isPrivate)}`);
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
          showTyping(ctx, message);
          showQueued(ctx, message);
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
    if (message && "chat" in message && query.data !== STOP_CALLBACK_DATA && settingsUi) {
      if (!allowed(message.chat.id, query.from.id)) {
        await bestEffort(ctx.answerCallbackQuery({ text: "Not available to you." }));
        return;
      }
      try {
        if (await settingsUi.press(ctx)) return;
      } catch (err) {
        log.error({ err: errorText(err), chatId: message.chat.id }, "settings button failed");
        await bestEffort(ctx.answerCallbackQuery({ text: "Could not change the settings right now." }));
        return;
      }
    }
    if (query.data !== STOP_CALLBACK_DATA || !message || !("chat" in message)) {
      await bestEffort(ctx.answerCallbackQuery());
      return;
    }
    if (!allowed(message.chat.id, query.from.id)) {
      await bestEffort(ctx.answerCallbackQuery({ text: "Not available to you." }));
      return;
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
    webhookSecret,
    errorText,
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

/** Why a courtesy reply is sent: `counted` (the limiter refused this very message), `outsider` (not on the allow lists). */
type CourtesyKind = "reply" | "counted" | "outsider";

/** Whether the user's per-minute limit leaves room for a courtesy reply (an outsider's: one a minute). */
async function mayAnswer(gateway: BotGateway, message: Message, kind: CourtesyKind): Promise<boolean> {
  const userId = message.from?.id;
  if (kind === "counted" || !gateway.mayReply || userId === undefined) return true;
  return gateway.mayReply("telegram", String(userId), { outsider: kind === "outsider" });
}

function errorText(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}

/** Runs a best-effort call (courtesy replies, callback answers): API and network failures are already logged by the API transformer. */
async function bestEffort(call: Promise<unknown>): Promise<void> {
  try {
    await call;
  } catch (err) {
    if (!(err instanceof GrammyError || err instanceof HttpError)) throw err;
  }
}
