/**
 * A fake Telegram Bot API server: real HTTP on 127.0.0.1, `/bot<token>/<method>`, JSON,
 * form and multipart bodies, `{ ok, result }` / `{ ok: false, error_code, description,
 * parameters }` answers with the texts the real server (tdlib/telegram-bot-api) uses.
 *
 * It keeps what users would see (per-chat messages with parsed entities, drafts, topics),
 * long-polls like the real getUpdates (offset confirms, limit, timeout, allowed_updates,
 * 409 for a competing poll), delivers to a webhook, enforces and records the documented
 * flood limits, and fails on demand. Point grammY at it with `client: { apiRoot: fake.apiRoot }`.
 *
 *   const tg = await startFakeTelegram();
 *   const alice = { id: 1001, first_name: "Alice" };
 *   tg.userSays(privateChat(alice), alice, "hi");
 *   await tg.waitFor(() => tg.botMessages(alice.id).at(-1)?.text === "hello");
 *   await tg.close();
 *
 * This file is the fake's public face (its types and the wiring); the parts live in ./telegram/:
 * the state, the HTTP transport, the method handlers by area (messages, updates and webhook,
 * chats, members and commands, files), the webhook delivery, and what tests do to and read
 * from the world. Flood control and HTML parsing are in telegram-flood-control.ts and
 * telegram-html.ts, the file store in telegram-files.ts.
 */
import type { MessageEntity } from "grammy/types";
import type { FloodLimits, FloodViolation } from "./telegram-flood-control.js";
import type { FakeMediaInput, FakeTelegramFiles } from "./telegram-files.js";
import { createInspection } from "./telegram/inspection.js";
import { createRequestHandler, listenOnLoopback } from "./telegram/http-transport.js";
import { createDispatch } from "./telegram/method-dispatch.js";
import { chatMemberCommandMethods } from "./telegram/methods-chat-members-commands.js";
import { fileMethods } from "./telegram/methods-files.js";
import { messageMethods } from "./telegram/methods-messages.js";
import { createReactions, type ReactionChange } from "./telegram/methods-reactions.js";
import { updateWebhookMethods } from "./telegram/methods-updates-webhook.js";
import { createTelegramState } from "./telegram/state.js";
import { createPushUpdate } from "./telegram/update-queue.js";
import { createUserActions } from "./telegram/user-actions.js";
import { createWebhookDelivery } from "./telegram/webhook-delivery.js";

export { detectEntities } from "./telegram/entities.js";

export type { FloodLimits, FloodViolation } from "./telegram-flood-control.js";
export type { ReactionChange } from "./telegram/methods-reactions.js";

/** A Telegram user as tests describe one. */
export interface FakeUser {
  id: number;
  first_name: string;
  last_name?: string;
  username?: string;
  is_bot?: boolean;
  language_code?: string;
}

/** A chat as tests describe one; for private chats the id is the user's id. */
export type FakeChat =
  | { id: number; type: "private"; first_name?: string; last_name?: string; username?: string }
  | { id: number; type: "group" | "supergroup"; title: string; is_forum?: boolean };

/** Options of the fake server. */
export interface FakeTelegramOptions {
  /** The bot's identity (getMe). Default id 7000000001, username "test_bot", first name "Test Bot". */
  bot?: { id?: number; username?: string; first_name?: string };
  /** Clock for message dates, call timestamps and flood control (ms). Long-poll timeouts use real timers. */
  now?: () => number;
  /** Flood limits; defaults are the documented ones, enforced. */
  floodLimits?: Partial<FloodLimits>;
  /** Privacy mode: in groups the bot only receives commands, @mentions and replies to its messages. Default false. */
  privacyMode?: boolean;
  /** First update_id handed out. */
  firstUpdateId?: number;
  /** Delay between webhook delivery attempts after a failure. Default 100 ms. */
  webhookRetryDelayMs?: number;
  /** Upper bound for getUpdates' `timeout` (the real server allows 50 s). */
  maxLongPollSeconds?: number;
}

/** A failure to answer instead of running the method (see `failNext`). */
export type InjectedFailure =
  /** 429 "Too Many Requests: retry after N" with parameters.retry_after. */
  | { retryAfter: number }
  /** A Bot API error with an exact description, e.g. { errorCode: 403, description: "Forbidden: bot was blocked by the user" }. */
  | { errorCode: number; description: string }
  /** A 5xx; `html` answers like the nginx in front of the real API (not JSON, so grammY throws HttpError); `applied` runs the method first (the answer is lost, the effect is not). */
  | { status: 500 | 502 | 503 | 504; html?: boolean; applied?: boolean }
  /** The connection is destroyed without an answer (grammY HttpError); `applied` as above. */
  | { networkError: true; applied?: boolean };

/** A member's status in a chat, as getChatMember reports it. */
export type ChatMemberStatus = "creator" | "administrator" | "member" | "restricted" | "left" | "kicked";

/** One request the fake answered. */
export interface RecordedCall {
  seq: number;
  at: number;
  method: string;
  params: Record<string, unknown>;
  status: number;
  ok: boolean;
  description?: string;
  result?: unknown;
}

/** A message as a user sees it. */
export interface ChatMessageView {
  chatId: number;
  messageId: number;
  threadId?: number;
  from: FakeUser;
  fromBot: boolean;
  text: string;
  entities: MessageEntity[];
  /** The text as the bot sent it (HTML source when parse_mode was HTML). */
  source?: string;
  parseMode?: string;
  replyToMessageId?: number;
  /** Inline keyboard buttons, if any. */
  buttons?: { text: string; callback_data?: string; url?: string }[][];
  sentAt: number;
  editCount: number;
  editedAt?: number;
  deleted: boolean;
  /** Every text the message showed, oldest first. */
  history: string[];
}

/** A draft (sendMessageDraft) while it is visible. */
export interface DraftView {
  chatId: number;
  threadId?: number;
  draftId: number;
  text: string;
  entities: MessageEntity[];
  updatedAt: number;
  updates: number;
  canStop: boolean;
}

/** A webhook delivery attempt. */
export interface WebhookAttempt {
  at: number;
  updateId: number;
  status?: number;
  error?: string;
}

/** Builds the private chat of a user. */
export function privateChat(user: FakeUser): FakeChat {
  return {
    id: user.id,
    type: "private",
    first_name: user.first_name,
    ...(user.last_name ? { last_name: user.last_name } : {}),
    ...(user.username ? { username: user.username } : {}),
  };
}

/** The running fake; see the file comment for a tour. */
export interface FakeTelegram {
  /** `http://127.0.0.1:<port>`: grammY's `client.apiRoot`. */
  readonly apiRoot: string;
  readonly token: string;
  /** The bot as getMe returns it. */
  readonly me: FakeUser & { is_bot: true; username: string };
  /** Photos and documents users sent; getFile and the file download URL serve them. */
  readonly files: FakeTelegramFiles;

  // ─── what users do ───────────────────────────────────────────────────────────

  /** Registers a chat the bot is in (userSays does this by itself). */
  addChat(chat: FakeChat): void;
  /**
   * A user writes a text message. Commands and @mentions get entities like a Telegram client
   * makes them; `entities` replaces that detection (e.g. for a text_mention). In forum topics
   * (`threadId`) an unanswered message replies, like in Telegram, to the topic's creation message.
   */
  userSays(
    chat: FakeChat,
    user: FakeUser,
    text: string,
    opts?: { replyTo?: number; threadId?: number; entities?: MessageEntity[]; quote?: string },
  ): { updateId: number | undefined; message: Record<string, unknown> };
  /** A user sends a photo or document, with an optional caption (entities detected like userSays). */
  userSendsFile(
    chat: FakeChat,
    user: FakeUser,
    file: FakeMediaInput,
    opts?: { replyTo?: number; threadId?: number },
  ): Promise<{ updateId: number | undefined; message: Record<string, unknown> }>;
  /** Sets a user's status in a chat (getChatMember); users who wrote in a chat are members by default. */
  setMemberStatus(chatId: number, user: FakeUser, status: ChatMemberStatus): void;
  /** Puts a message from the bot into a chat without an API call (e.g. an earlier answer users can reply to). */
  botSays(chatId: number, text: string, opts?: { threadId?: number; replyTo?: number }): ChatMessageView;
  /** A user edits one of their messages (an `edited_message` update). */
  userEdits(chatId: number, messageId: number, text: string): number | undefined;
  /** A user presses an inline button under a bot message; returns the callback query id. */
  userPresses(
    chatId: number,
    user: FakeUser,
    messageId: number,
    data: string,
  ): { queryId: string; updateId: number | undefined };
  /** A user presses the stop button of a draft sent with can_stop (a `stopped_message_generation` update). */
  userStopsDraft(chatId: number, draftId: number, threadId?: number): number | undefined;
  /** Creates a forum topic in a forum supergroup; returns its message_thread_id. */
  createForumTopic(chatId: number, name: string, creator: FakeUser): number;
  /** Queues a raw update (update_id is assigned); returns the id, or undefined if allowed_updates filters it out. */
  pushUpdate(update: Record<string, unknown>): number | undefined;

  // ─── fault injection ──────────────────────────────────────────────────────────

  /** The next `n` calls of `method` (case-insensitive, or "*" for any) get `failure` instead of running. */
  failNext(method: string, n: number, failure: InjectedFailure): void;

  // ─── what tests read ─────────────────────────────────────────────────────────

  /** Every call answered so far, optionally of one method. */
  calls(method?: string): RecordedCall[];
  /** Requests as they arrived (before any answer; a long poll shows up here at once, in `calls` when it ends). */
  requests(method?: string): { at: number; method: string; params: Record<string, unknown> }[];
  /** The `offset` of every getUpdates request so far, in arrival order (0 when absent). */
  getUpdatesOffsets(): number[];
  /** True while a getUpdates long poll is waiting for updates. */
  isLongPolling(): boolean;
  /** Requests the real server would have refused for flood (recorded in every mode but "off"). */
  floodViolations(): FloodViolation[];
  /** Messages of a chat in order (user and bot), optionally of one forum topic. */
  messages(chatId: number, opts?: { threadId?: number; includeDeleted?: boolean }): ChatMessageView[];
  /** The bot's messages in a chat (or topic), in order. */
  botMessages(chatId: number, opts?: { threadId?: number }): ChatMessageView[];
  /** What a user reads from the bot in a chat (or topic): the texts of its messages, joined by newlines. */
  visibleText(chatId: number, opts?: { threadId?: number }): string;
  /** The draft currently visible in a private chat (or topic), if any. */
  draft(chatId: number, threadId?: number): DraftView | undefined;
  /** The last chat action (typing…) sent to a chat. */
  lastChatAction(chatId: number): { action: string; at: number; threadId?: number } | undefined;
  /** The bot's reactions on a message now (setMessageReaction). */
  botReactions(chatId: number, messageId: number): string[];
  /** Every reaction change the bot made (setMessageReaction accepted), oldest first. */
  reactionLog(): ReactionChange[];
  /** The commands registered with setMyCommands. */
  registeredCommands(): unknown[];
  /** How a callback query was answered (undefined = not yet). */
  callbackAnswer(queryId: string): Record<string, unknown> | undefined;
  /** Updates not yet confirmed by a getUpdates offset (or by a webhook 2xx). */
  pendingUpdateIds(): number[];
  /** The webhook as set (undefined when long polling). */
  webhookInfo(): { url: string; secretToken?: string } | undefined;
  /** Webhook delivery attempts so far. */
  webhookDeliveries(): WebhookAttempt[];
  /**
   * Resolves with the predicate's first truthy value, re-checking after every request and
   * update and every 25 ms (so predicates may look at state outside the fake too); rejects
   * after `timeoutMs` (real time) with the recent calls for the diagnosis.
   */
  waitFor<T>(predicate: () => T | undefined | null | false, opts?: { timeoutMs?: number; what?: string }): Promise<T>;
  /** Stops the server: pending long polls and keep-alive sockets are closed. */
  close(): Promise<void>;
}

/** Starts a fake Telegram Bot API server on loopback. */
export async function startFakeTelegram(options: FakeTelegramOptions = {}): Promise<FakeTelegram> {
  let handle: ReturnType<typeof createRequestHandler> | undefined;
  const { server, port } = await listenOnLoopback(() => handle);
  const state = createTelegramState(port, options);
  // The delivery runs methods a webhook answers with, and setWebhook starts the delivery: the dispatcher is looked up late.
  const delivery = createWebhookDelivery(state, (method, p, res) => dispatch(method, p, res));
  const reactions = createReactions(state);
  const dispatch = createDispatch(
    messageMethods(state),
    reactions.methods,
    updateWebhookMethods(state, delivery),
    chatMemberCommandMethods(state),
    fileMethods(state),
  );
  const pushUpdate = createPushUpdate(state, () => delivery.kick());
  handle = createRequestHandler(state, dispatch);
  return {
    apiRoot: state.apiRoot,
    token: state.token,
    me: state.me,
    files: state.files,
    pushUpdate,
    ...createUserActions(state, pushUpdate),
    ...createInspection(state),
    ...reactions.inspection,
    async close() {
      if (state.closed) return;
      state.closed = true;
      if (state.deliveryTimer) clearTimeout(state.deliveryTimer);
      state.poller?.finish([]);
      state.poller = undefined;
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
