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
 */
import { EventEmitter } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { MessageEntity } from "grammy/types";
import { DOCUMENTED_FLOOD_LIMITS, FloodControl, type FloodLimits, type FloodViolation } from "./telegram-flood-control.js";
import { FakeTelegramFiles, type FakeMediaInput } from "./telegram-files.js";
import { TelegramHtmlError, parseTelegramHtml, telegramTextLength, trimParsed, type ParsedText } from "./telegram-html.js";

export type { FloodLimits, FloodViolation } from "./telegram-flood-control.js";

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

interface StoredMessage {
  chatId: number;
  messageId: number;
  threadId?: number;
  isTopicMessage: boolean;
  from: FakeUser;
  date: number;
  text: string;
  entities: MessageEntity[];
  source?: string;
  parseMode?: string;
  replyToMessageId?: number;
  replyMarkup?: Record<string, unknown>;
  forumTopicCreated?: { name: string; icon_color: number };
  /** A photo or document (its text is then the caption). */
  media?: Record<string, unknown>;
  sentAt: number;
  editCount: number;
  editedAt?: number;
  deleted: boolean;
  history: string[];
}

interface ChatState {
  chat: FakeChat;
  nextMessageId: number;
  messages: Map<number, StoredMessage>;
  topics: Map<number, string>;
  drafts: Map<string, DraftView & { expiresAt: number }>;
  lastAction?: { action: string; at: number; threadId?: number };
}

interface QueuedUpdate {
  update_id: number;
  type: string;
  update: Record<string, unknown>;
}

interface Poller {
  limit: number;
  finish(updates: QueuedUpdate[] | ApiFailure): void;
}

/** A Bot API error answer. */
class ApiFailure {
  constructor(
    readonly code: number,
    readonly description: string,
    readonly parameters?: Record<string, unknown>,
  ) {}
}

const bad = (text: string) => new ApiFailure(400, `Bad Request: ${text}`);
const NOT_MODIFIED =
  "message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message";
const DEFAULT_UPDATE_TYPES_EXCLUDED = new Set(["chat_member", "message_reaction", "message_reaction_count"]);
const CHAT_ACTIONS = new Set([
  "typing", "upload_photo", "record_video", "upload_video", "record_voice", "upload_voice",
  "upload_document", "choose_sticker", "find_location", "record_video_note", "upload_video_note",
]);
/** How long Telegram shows a draft without a refresh. */
const DRAFT_TTL_MS = 30_000;

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

/** Finds what Telegram clients mark up by themselves: bot commands, @mentions, URLs (UTF-16 offsets). */
export function detectEntities(text: string): MessageEntity[] {
  const found: MessageEntity[] = [];
  const word = /[\p{L}\p{N}_]/u;
  for (const m of text.matchAll(/\/[a-zA-Z0-9_]{1,64}(?:@[a-zA-Z0-9_]{3,32})?/g)) {
    const before = text[m.index - 1];
    const after = text[m.index + m[0].length];
    if (before && (word.test(before) || "/<>".includes(before))) continue;
    if (after && (word.test(after) || "/<>@".includes(after))) continue;
    found.push({ type: "bot_command", offset: m.index, length: m[0].length });
  }
  for (const m of text.matchAll(/@[a-zA-Z0-9_]{2,32}/g)) {
    const before = text[m.index - 1];
    const after = text[m.index + m[0].length];
    if (before && (word.test(before) || before === "/" )) continue;
    if (after && word.test(after)) continue;
    if (found.some((e) => e.type === "bot_command" && e.offset < m.index && m.index < e.offset + e.length)) continue;
    found.push({ type: "mention", offset: m.index, length: m[0].length });
  }
  for (const m of text.matchAll(/https?:\/\/[^\s<>"]+/g)) found.push({ type: "url", offset: m.index, length: m[0].length });
  return found.sort((a, b) => a.offset - b.offset);
}

/**
 * Telegram finds @username mentions in a bot's text by itself, whatever the parse mode (and a mention
 * in a group notifies that member), except inside code, pre and links.
 */
function withAutoMentions(parsed: ParsedText): ParsedText {
  const opaque = parsed.entities.filter((e) => ["code", "pre", "text_link", "text_mention", "url"].includes(e.type));
  const mentions = detectEntities(parsed.text).filter(
    (m) => m.type === "mention" && !opaque.some((e) => m.offset < e.offset + e.length && e.offset < m.offset + m.length),
  );
  if (mentions.length === 0) return parsed;
  return { ...parsed, entities: [...parsed.entities, ...mentions].sort((a, b) => a.offset - b.offset) };
}

/** The running fake; see the file comment for a tour. */
export class FakeTelegram {
  /** `http://127.0.0.1:<port>`: grammY's `client.apiRoot`. */
  readonly apiRoot: string;
  readonly token: string;
  /** The bot as getMe returns it. */
  readonly me: FakeUser & { is_bot: true; username: string };

  private readonly now: () => number;
  private readonly flood: FloodControl;
  private readonly privacyMode: boolean;
  private readonly events = new EventEmitter();
  private readonly chats = new Map<number, ChatState>();
  private readonly recorded: RecordedCall[] = [];
  private readonly arrived: { at: number; method: string; params: Record<string, unknown> }[] = [];
  private readonly failures = new Map<string, InjectedFailure[]>();
  private readonly callbackQueries = new Map<string, { answered: boolean; answer?: Record<string, unknown> }>();
  private readonly webhookAttempts: WebhookAttempt[] = [];
  /** `chatId:userId` → the member's status and who they are (getChatMember). */
  private readonly members = new Map<string, { user: FakeUser; status: ChatMemberStatus }>();
  private queue: QueuedUpdate[] = [];
  private nextUpdateId: number;
  private allowedUpdates: string[] | undefined;
  private poller: Poller | undefined;
  private webhook: { url: string; secretToken?: string } | undefined;
  /** The most recent failed webhook delivery, as getWebhookInfo reports it. */
  private webhookLastError: { date: number; message: string } | undefined;
  private delivering = false;
  private deliveryTimer: NodeJS.Timeout | undefined;
  private commands: unknown[] = [];
  private seq = 0;
  private callbackSeq = 1;
  private closed = false;
  private changeScheduled = false;
  /** Photos and documents users sent; getFile and the file download URL serve them. */
  readonly files = new FakeTelegramFiles();

  private constructor(
    private readonly server: Server,
    port: number,
    private readonly options: FakeTelegramOptions,
  ) {
    this.apiRoot = `http://127.0.0.1:${port}`;
    const botId = options.bot?.id ?? 7_000_000_001;
    this.token = `${botId}:AAFakeTokenForTests_${port}`;
    this.me = {
      id: botId,
      is_bot: true,
      first_name: options.bot?.first_name ?? "Test Bot",
      username: options.bot?.username ?? "test_bot",
    };
    this.now = options.now ?? Date.now;
    this.flood = new FloodControl({ ...DOCUMENTED_FLOOD_LIMITS, ...options.floodLimits });
    this.privacyMode = options.privacyMode ?? false;
    this.nextUpdateId = options.firstUpdateId ?? 500_000_001;
    this.events.setMaxListeners(1000);
  }

  /** Starts a fake on 127.0.0.1 with a free port. */
  static async start(options: FakeTelegramOptions = {}): Promise<FakeTelegram> {
    let fake: FakeTelegram | undefined;
    const server = createServer((req, res) => {
      if (!fake) {
        res.statusCode = 503;
        res.end();
        return;
      }
      void fake.serve(req, res);
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => resolve());
    });
    fake = new FakeTelegram(server, (server.address() as AddressInfo).port, options);
    return fake;
  }

  // ─── what users do ───────────────────────────────────────────────────────────

  /** Registers a chat the bot is in (userSays does this by itself). */
  addChat(chat: FakeChat): void {
    this.chatState(chat);
  }

  /**
   * A user writes a text message. Commands and @mentions get entities like a Telegram client
   * makes them; `entities` replaces that detection (e.g. for a text_mention). In forum topics
   * (`threadId`) an unanswered message replies, like in Telegram, to the topic's creation message.
   */
  userSays(
    chat: FakeChat,
    user: FakeUser,
    text: string,
    opts: { replyTo?: number; threadId?: number; entities?: MessageEntity[]; quote?: string } = {},
  ): { updateId: number | undefined; message: Record<string, unknown> } {
    const state = this.chatState(chat);
    if (!this.members.has(`${chat.id}:${user.id}`)) this.members.set(`${chat.id}:${user.id}`, { user, status: "member" });
    const msg = this.storeMessage(state, {
      from: user,
      text,
      entities: opts.entities ?? detectEntities(text),
      ...(opts.replyTo !== undefined ? { replyToMessageId: opts.replyTo } : {}),
      ...(opts.threadId !== undefined ? { threadId: opts.threadId } : {}),
    });
    const message = this.toApiMessage(msg);
    if (opts.quote !== undefined) message.quote = { text: opts.quote, position: 0 };
    if (!this.deliversToBot(state, msg)) return { updateId: undefined, message };
    return { updateId: this.pushUpdate({ message }), message };
  }

  /** A user sends a photo or document, with an optional caption (entities detected like userSays). */
  async userSendsFile(
    chat: FakeChat,
    user: FakeUser,
    file: FakeMediaInput,
    opts: { replyTo?: number; threadId?: number } = {},
  ): Promise<{ updateId: number | undefined; message: Record<string, unknown> }> {
    const media = await this.files.media(file);
    const state = this.chatState(chat);
    const caption = file.caption ?? "";
    const msg = this.storeMessage(state, {
      from: user,
      text: caption,
      entities: detectEntities(caption),
      media,
      ...(opts.replyTo !== undefined ? { replyToMessageId: opts.replyTo } : {}),
      ...(opts.threadId !== undefined ? { threadId: opts.threadId } : {}),
    });
    const message = this.toApiMessage(msg);
    if (!this.deliversToBot(state, msg)) return { updateId: undefined, message };
    return { updateId: this.pushUpdate({ message }), message };
  }

  /** Sets a user's status in a chat (getChatMember); users who wrote in a chat are members by default. */
  setMemberStatus(chatId: number, user: FakeUser, status: ChatMemberStatus): void {
    this.requireChat(chatId);
    this.members.set(`${chatId}:${user.id}`, { user, status });
  }

  /** Puts a message from the bot into a chat without an API call (e.g. an earlier answer users can reply to). */
  botSays(chatId: number, text: string, opts: { threadId?: number; replyTo?: number } = {}): ChatMessageView {
    const state = this.requireChat(chatId);
    const msg = this.storeMessage(state, {
      from: this.me,
      text,
      entities: [],
      ...(opts.threadId !== undefined ? { threadId: opts.threadId } : {}),
      ...(opts.replyTo !== undefined ? { replyToMessageId: opts.replyTo } : {}),
    });
    return this.view(msg);
  }

  /** A user edits one of their messages (an `edited_message` update). */
  userEdits(chatId: number, messageId: number, text: string): number | undefined {
    const msg = this.requireStored(chatId, messageId);
    msg.text = text;
    msg.entities = detectEntities(text);
    msg.editCount++;
    msg.editedAt = this.now();
    msg.history.push(text);
    const message = { ...this.toApiMessage(msg), edit_date: Math.floor(this.now() / 1000) };
    return this.pushUpdate({ edited_message: message });
  }

  /** A user presses an inline button under a bot message; returns the callback query id. */
  userPresses(chatId: number, user: FakeUser, messageId: number, data: string): { queryId: string; updateId: number | undefined } {
    const msg = this.requireStored(chatId, messageId);
    const queryId = String(4_000_000_000_000 + this.callbackSeq++);
    this.callbackQueries.set(queryId, { answered: false });
    const updateId = this.pushUpdate({
      callback_query: {
        id: queryId,
        from: this.apiUser(user),
        message: this.toApiMessage(msg),
        chat_instance: String(-chatId * 7),
        data,
      },
    });
    return { queryId, updateId };
  }

  /** A user presses the stop button of a draft sent with can_stop (a `stopped_message_generation` update). */
  userStopsDraft(chatId: number, draftId: number, threadId?: number): number | undefined {
    const state = this.requireChat(chatId);
    return this.pushUpdate({
      stopped_message_generation: {
        chat: this.apiChat(state.chat),
        ...(threadId !== undefined ? { message_thread_id: threadId } : {}),
        draft_id: draftId,
      },
    });
  }

  /** Creates a forum topic in a forum supergroup; returns its message_thread_id. */
  createForumTopic(chatId: number, name: string, creator: FakeUser): number {
    const state = this.requireChat(chatId);
    if (state.chat.type !== "supergroup" || !state.chat.is_forum) throw new Error(`chat ${chatId} is not a forum supergroup`);
    const id = state.nextMessageId;
    const msg = this.storeMessage(state, { from: creator, text: "", entities: [], threadId: id, forumTopicCreated: { name, icon_color: 7322096 } });
    state.topics.set(msg.messageId, name);
    return msg.messageId;
  }

  /** Queues a raw update (update_id is assigned); returns the id, or undefined if allowed_updates filters it out. */
  pushUpdate(update: Record<string, unknown>): number | undefined {
    const type = Object.keys(update).find((k) => k !== "update_id") ?? "unknown";
    if (!this.wants(type)) return undefined;
    const updateId = this.nextUpdateId++;
    this.queue.push({ update_id: updateId, type, update: { update_id: updateId, ...update } });
    this.wakePoller();
    this.kickWebhook();
    this.changed();
    return updateId;
  }

  // ─── fault injection ──────────────────────────────────────────────────────────

  /** The next `n` calls of `method` (case-insensitive, or "*" for any) get `failure` instead of running. */
  failNext(method: string, n: number, failure: InjectedFailure): void {
    const key = method.toLowerCase();
    this.failures.set(key, [...(this.failures.get(key) ?? []), ...Array.from({ length: n }, () => failure)]);
  }

  // ─── what tests read ─────────────────────────────────────────────────────────

  /** Every call answered so far, optionally of one method. */
  calls(method?: string): RecordedCall[] {
    const m = method?.toLowerCase();
    return this.recorded.filter((c) => m === undefined || c.method.toLowerCase() === m);
  }

  /** Requests as they arrived (before any answer; a long poll shows up here at once, in `calls` when it ends). */
  requests(method?: string): { at: number; method: string; params: Record<string, unknown> }[] {
    const m = method?.toLowerCase();
    return this.arrived.filter((c) => m === undefined || c.method.toLowerCase() === m);
  }

  /** The `offset` of every getUpdates request so far, in arrival order (0 when absent). */
  getUpdatesOffsets(): number[] {
    return this.requests("getUpdates").map((r) => int(r.params.offset) ?? 0);
  }

  /** True while a getUpdates long poll is waiting for updates. */
  isLongPolling(): boolean {
    return this.poller !== undefined;
  }

  /** Requests the real server would have refused for flood (recorded in every mode but "off"). */
  floodViolations(): FloodViolation[] {
    return [...this.flood.violations];
  }

  /** Messages of a chat in order (user and bot), optionally of one forum topic. */
  messages(chatId: number, opts: { threadId?: number; includeDeleted?: boolean } = {}): ChatMessageView[] {
    const state = this.chats.get(chatId);
    if (!state) return [];
    return [...state.messages.values()]
      .filter((m) => !m.forumTopicCreated)
      .filter((m) => opts.includeDeleted || !m.deleted)
      .filter((m) => opts.threadId === undefined || m.threadId === opts.threadId)
      .map((m) => this.view(m));
  }

  /** The bot's messages in a chat (or topic), in order. */
  botMessages(chatId: number, opts: { threadId?: number } = {}): ChatMessageView[] {
    return this.messages(chatId, opts).filter((m) => m.fromBot);
  }

  /** What a user reads from the bot in a chat (or topic): the texts of its messages, joined by newlines. */
  visibleText(chatId: number, opts: { threadId?: number } = {}): string {
    return this.botMessages(chatId, opts)
      .map((m) => m.text)
      .join("\n");
  }

  /** The draft currently visible in a private chat (or topic), if any. */
  draft(chatId: number, threadId?: number): DraftView | undefined {
    const d = this.chats.get(chatId)?.drafts.get(String(threadId ?? 0));
    if (!d || d.expiresAt <= this.now()) return undefined;
    const { expiresAt: _expiresAt, ...view } = d;
    return view;
  }

  /** The last chat action (typing…) sent to a chat. */
  lastChatAction(chatId: number): { action: string; at: number; threadId?: number } | undefined {
    return this.chats.get(chatId)?.lastAction;
  }

  /** The commands registered with setMyCommands. */
  registeredCommands(): unknown[] {
    return this.commands;
  }

  /** How a callback query was answered (undefined = not yet). */
  callbackAnswer(queryId: string): Record<string, unknown> | undefined {
    return this.callbackQueries.get(queryId)?.answer;
  }

  /** Updates not yet confirmed by a getUpdates offset (or by a webhook 2xx). */
  pendingUpdateIds(): number[] {
    return this.queue.map((u) => u.update_id);
  }

  /** The webhook as set (undefined when long polling). */
  webhookInfo(): { url: string; secretToken?: string } | undefined {
    return this.webhook;
  }

  /** Webhook delivery attempts so far. */
  webhookDeliveries(): WebhookAttempt[] {
    return [...this.webhookAttempts];
  }

  /**
   * Resolves with the predicate's first truthy value, re-checking after every request and
   * update and every 25 ms (so predicates may look at state outside the fake too); rejects
   * after `timeoutMs` (real time) with the recent calls for the diagnosis.
   */
  waitFor<T>(predicate: () => T | undefined | null | false, opts: { timeoutMs?: number; what?: string } = {}): Promise<T> {
    const first = predicate();
    if (first) return Promise.resolve(first);
    const timeoutMs = opts.timeoutMs ?? 5000;
    return new Promise<T>((resolve, reject) => {
      const check = () => {
        try {
          const value = predicate();
          if (value) {
            cleanup();
            resolve(value);
          }
        } catch (err) {
          cleanup();
          reject(err);
        }
      };
      const timer = setTimeout(() => {
        cleanup();
        const recent = this.recorded
          .slice(-8)
          .map((c) => `${c.method} ${c.status}${c.description ? ` ${c.description}` : ""}`)
          .join("; ");
        reject(new Error(`fake Telegram: timed out after ${timeoutMs} ms waiting for ${opts.what ?? "a condition"}; recent calls: ${recent}`));
      }, timeoutMs);
      const ticker = setInterval(check, 25);
      const cleanup = () => {
        clearTimeout(timer);
        clearInterval(ticker);
        this.events.off("change", check);
      };
      this.events.on("change", check);
    });
  }

  /** Stops the server: pending long polls and keep-alive sockets are closed. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.deliveryTimer) clearTimeout(this.deliveryTimer);
    this.poller?.finish([]);
    this.poller = undefined;
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  // ─── HTTP ────────────────────────────────────────────────────────────────────

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", this.apiRoot);
    if (req.method === "GET" && this.files.serveDownload(url.pathname, this.token, res)) return this.changed();
    const route = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(url.pathname);
    if (!route) return this.reply(res, 404, { ok: false, error_code: 404, description: "Not Found" });
    const [, token, method] = route as unknown as [string, string, string];
    let params: Record<string, unknown>;
    try {
      params = await readParams(req, url);
    } catch (err) {
      return this.reply(res, 400, { ok: false, error_code: 400, description: (err as Error).message });
    }
    if (token !== this.token) return this.answer(res, method, params, new ApiFailure(401, "Unauthorized"));

    this.arrived.push({ at: this.now(), method, params });
    const injected = this.failures.get(method.toLowerCase())?.shift() ?? this.failures.get("*")?.shift();
    if (injected) return this.injectFailure(res, req, method, params, injected);

    let outcome: unknown;
    try {
      outcome = await this.dispatch(method, params, res);
    } catch (err) {
      // A bug in the fake must show up in the test, not hang it.
      outcome = new ApiFailure(500, `Internal Server Error: fake Telegram crashed: ${(err as Error).stack ?? String(err)}`);
    }
    return this.answer(res, method, params, outcome);
  }

  private async injectFailure(res: ServerResponse, req: IncomingMessage, method: string, params: Record<string, unknown>, failure: InjectedFailure): Promise<void> {
    if ("retryAfter" in failure) {
      return this.answer(res, method, params, new ApiFailure(429, `Too Many Requests: retry after ${failure.retryAfter}`, { retry_after: failure.retryAfter }));
    }
    if ("errorCode" in failure) return this.answer(res, method, params, new ApiFailure(failure.errorCode, failure.description));
    if (failure.applied) await this.dispatch(method, params, res);
    if ("networkError" in failure) {
      this.record(method, params, 0, false, "connection destroyed (injected)");
      req.socket.destroy();
      return;
    }
    if (failure.html) {
      this.record(method, params, failure.status, false, "HTML error page (injected)");
      res.writeHead(failure.status, { "content-type": "text/html" });
      res.end(`<html><head><title>${failure.status} Bad Gateway</title></head><body><center><h1>${failure.status} Bad Gateway</h1></center><hr><center>nginx/1.18.0</center></body></html>`);
      this.changed();
      return;
    }
    return this.answer(res, method, params, new ApiFailure(failure.status, "Internal Server Error"));
  }

  private answer(res: ServerResponse, method: string, params: Record<string, unknown>, outcome: unknown): void {
    if (outcome === CLIENT_GONE) {
      this.record(method, params, 0, false, "client went away");
      return;
    }
    if (outcome instanceof ApiFailure) {
      this.record(method, params, outcome.code, false, outcome.description);
      this.reply(res, outcome.code, {
        ok: false,
        error_code: outcome.code,
        description: outcome.description,
        ...(outcome.parameters ? { parameters: outcome.parameters } : {}),
      });
      return;
    }
    this.record(method, params, 200, true, undefined, outcome);
    this.reply(res, 200, { ok: true, result: outcome });
  }

  private reply(res: ServerResponse, status: number, body: unknown): void {
    if (res.writableEnded || res.destroyed) return;
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
    this.changed();
  }

  private record(method: string, params: Record<string, unknown>, status: number, ok: boolean, description?: string, result?: unknown): void {
    this.recorded.push({
      seq: ++this.seq,
      at: this.now(),
      method,
      params,
      status,
      ok,
      ...(description !== undefined ? { description } : {}),
      ...(result !== undefined ? { result } : {}),
    });
    this.changed();
  }

  /** Tells waiters something changed, once the current request has been fully applied and recorded. */
  private changed(): void {
    if (this.changeScheduled) return;
    this.changeScheduled = true;
    setImmediate(() => {
      this.changeScheduled = false;
      this.events.emit("change");
    });
  }

  // ─── methods ─────────────────────────────────────────────────────────────────

  private async dispatch(method: string, p: Record<string, unknown>, res?: ServerResponse): Promise<unknown> {
    try {
      switch (method.toLowerCase()) {
        case "getme":
          return {
            ...this.apiUser(this.me),
            can_join_groups: true,
            can_read_all_group_messages: !this.privacyMode,
            supports_inline_queries: false,
            can_connect_to_business: false,
            has_main_web_app: false,
            has_topics_enabled: false,
            allows_users_to_create_topics: false,
            can_manage_bots: false,
            supports_join_request_queries: false,
          };
        case "getupdates":
          return await this.getUpdates(p, res);
        case "setwebhook":
          return this.setWebhook(p);
        case "deletewebhook":
          return this.deleteWebhook(p);
        case "getwebhookinfo":
          return {
            url: this.webhook?.url ?? "",
            has_custom_certificate: false,
            pending_update_count: this.queue.length,
            ...(this.webhookLastError ? { last_error_date: this.webhookLastError.date, last_error_message: this.webhookLastError.message } : {}),
          };
        case "sendmessage":
          return this.sendMessage(p);
        case "editmessagetext":
          return this.editMessageText(p);
        case "sendmessagedraft":
          return this.sendMessageDraft(p);
        case "sendchataction":
          return this.sendChatAction(p);
        case "setmycommands":
          return this.setMyCommands(p);
        case "getmycommands":
          return this.commands;
        case "deletemycommands":
          this.commands = [];
          return true;
        case "answercallbackquery":
          return this.answerCallbackQuery(p);
        case "deletemessage":
          return this.deleteMessage(p);
        case "getfile": {
          const answer = this.files.getFile(p);
          return "result" in answer ? answer.result : new ApiFailure(answer.error.code, answer.error.description);
        }
        case "getchatmember":
          return this.getChatMember(p);
        default:
          return new ApiFailure(404, "Not Found: method not found");
      }
    } catch (err) {
      if (err instanceof ApiFailure) return err;
      throw err;
    }
  }

  private async getUpdates(p: Record<string, unknown>, res?: ServerResponse): Promise<unknown> {
    if (this.webhook) {
      return new ApiFailure(409, "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first");
    }
    const offset = int(p.offset) ?? 0;
    const limit = Math.min(100, Math.max(1, int(p.limit) ?? 100));
    const timeout = Math.min(this.options.maxLongPollSeconds ?? 50, Math.max(0, int(p.timeout) ?? 0));
    if (p.allowed_updates !== undefined) {
      const allowed = jsonArg(p.allowed_updates, "allowed_updates");
      if (Array.isArray(allowed)) this.allowedUpdates = allowed.map(String);
    }
    // Calling with an offset confirms every update before it: they are forgotten for good.
    if (offset > 0) this.queue = this.queue.filter((u) => u.update_id >= offset);
    else if (offset < 0) this.queue = this.queue.slice(offset);
    this.changed();
    const ready = this.queue.slice(0, limit);
    if (ready.length > 0 || timeout === 0) return ready.map((u) => u.update);

    // A second long poll ends the first with 409, like two bot instances fighting over one token.
    this.poller?.finish(new ApiFailure(409, "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running"));
    return new Promise((resolve) => {
      let done = false;
      const poller: Poller = {
        limit,
        finish: (outcome) => {
          if (done) return;
          done = true;
          clearTimeout(timer);
          if (this.poller === poller) this.poller = undefined;
          this.changed();
          resolve(outcome instanceof ApiFailure ? outcome : outcome.map((u) => u.update));
        },
      };
      const timer = setTimeout(() => poller.finish([]), timeout * 1000);
      this.poller = poller;
      this.changed();
      res?.once("close", () => {
        if (!done) {
          // The client aborted (bot.stop, runner.stop): the request is gone, nothing is answered.
          done = true;
          clearTimeout(timer);
          if (this.poller === poller) this.poller = undefined;
          this.changed();
          resolve(CLIENT_GONE);
        }
      });
    });
  }

  private wakePoller(): void {
    const poller = this.poller;
    if (poller && this.queue.length > 0) poller.finish(this.queue.slice(0, poller.limit));
  }

  private wants(type: string): boolean {
    if (this.allowedUpdates === undefined || this.allowedUpdates.length === 0) return !DEFAULT_UPDATE_TYPES_EXCLUDED.has(type);
    return this.allowedUpdates.includes(type);
  }

  private setWebhook(p: Record<string, unknown>): unknown {
    const url = str(p.url) ?? "";
    if (url === "") return this.deleteWebhook(p);
    if (!/^https?:\/\//.test(url)) return bad("bad webhook: An HTTPS URL must be provided for webhook");
    const secretToken = str(p.secret_token);
    if (secretToken !== undefined && !/^[A-Za-z0-9_-]{1,256}$/.test(secretToken)) return bad("secret token contains unallowed characters");
    if (p.allowed_updates !== undefined) {
      const allowed = jsonArg(p.allowed_updates, "allowed_updates");
      if (Array.isArray(allowed)) this.allowedUpdates = allowed.map(String);
    }
    if (bool(p.drop_pending_updates)) this.queue = [];
    this.poller?.finish(new ApiFailure(409, "Conflict: terminated by setWebhook request"));
    this.webhook = { url, ...(secretToken ? { secretToken } : {}) };
    this.kickWebhook();
    return true;
  }

  private deleteWebhook(p: Record<string, unknown>): unknown {
    if (bool(p.drop_pending_updates)) this.queue = [];
    this.webhook = undefined;
    return true;
  }

  private sendMessage(p: Record<string, unknown>): unknown {
    const state = this.chatFromParam(p.chat_id);
    const raw = str(p.text);
    if (raw === undefined || raw === "") return bad("message text is empty");
    const parsed = this.parseText(raw, p);
    if (parsed.text === "") return bad("text must be non-empty");
    if (telegramTextLength(parsed.text) > 4096) return bad("message is too long");
    const markup = this.checkMarkup(p.reply_markup);

    let threadId = int(p.message_thread_id);
    if (threadId !== undefined) this.checkThread(state, threadId);
    const replyParams = (p.reply_parameters !== undefined ? jsonArg(p.reply_parameters, "reply parameters") : undefined) as
      | { message_id?: number; allow_sending_without_reply?: boolean }
      | undefined;
    const replyId = replyParams?.message_id ?? int(p.reply_to_message_id);
    let replyTo: number | undefined;
    if (replyId !== undefined) {
      const target = state.messages.get(replyId);
      if (!target || target.deleted) {
        const allow = replyParams?.allow_sending_without_reply ?? bool(p.allow_sending_without_reply);
        if (!allow) return bad("message to be replied not found");
      } else {
        replyTo = replyId;
        // A reply lands in the topic of the message it answers.
        if (threadId === undefined && target.threadId !== undefined && state.chat.type === "supergroup" && state.chat.is_forum) threadId = target.threadId;
      }
    }

    this.admitFlood("sendMessage", state);
    const msg = this.storeMessage(state, {
      from: this.me,
      text: parsed.text,
      entities: parsed.entities,
      source: raw,
      ...(str(p.parse_mode) ? { parseMode: str(p.parse_mode) as string } : {}),
      ...(replyTo !== undefined ? { replyToMessageId: replyTo } : {}),
      ...(threadId !== undefined ? { threadId } : {}),
      ...(markup ? { replyMarkup: markup } : {}),
    });
    // A message from the bot ends the drafts shown in that chat.
    state.drafts.delete(String(threadId ?? 0));
    return this.toApiMessage(msg);
  }

  private editMessageText(p: Record<string, unknown>): unknown {
    if (p.inline_message_id !== undefined) return bad("inline messages are not supported by the fake");
    const state = this.chatFromParam(p.chat_id);
    const messageId = int(p.message_id);
    if (messageId === undefined) return bad("message identifier is not specified");
    const raw = str(p.text);
    if (raw === undefined || raw === "") return bad("message text is empty");
    const msg = state.messages.get(messageId);
    if (!msg || msg.deleted || msg.forumTopicCreated) return bad("message to edit not found");
    if (msg.from.id !== this.me.id) return bad("message can't be edited");
    const parsed = this.parseText(raw, p);
    if (parsed.text === "") return bad("text must be non-empty");
    if (telegramTextLength(parsed.text) > 4096) return bad("message is too long");
    const markup = this.checkMarkup(p.reply_markup);
    // Leaving reply_markup out of an edit removes the inline keyboard.
    if (parsed.text === msg.text && sameJson(parsed.entities, msg.entities) && sameJson(markup, msg.replyMarkup)) return bad(NOT_MODIFIED);

    this.admitFlood("editMessageText", state);
    msg.text = parsed.text;
    msg.entities = parsed.entities;
    msg.source = raw;
    const parseMode = str(p.parse_mode);
    if (parseMode) msg.parseMode = parseMode;
    else delete msg.parseMode;
    if (markup) msg.replyMarkup = markup;
    else delete msg.replyMarkup;
    msg.editCount++;
    msg.editedAt = this.now();
    msg.history.push(parsed.text);
    return { ...this.toApiMessage(msg), edit_date: Math.floor(this.now() / 1000) };
  }

  private sendMessageDraft(p: Record<string, unknown>): unknown {
    const state = this.chatFromParam(p.chat_id);
    const draftId = int(p.draft_id);
    if (!draftId) return bad("draft_id must be non-zero");
    if (state.chat.type !== "private") return bad("TEXTDRAFT_PEER_INVALID");
    const raw = str(p.text) ?? "";
    // An empty draft is allowed: Telegram shows "Thinking…".
    const parsed = raw === "" ? { text: "", entities: [] } : this.parseText(raw, p);
    if (telegramTextLength(parsed.text) > 4096) return bad("message is too long");
    const threadId = int(p.message_thread_id);
    const key = String(threadId ?? 0);
    const previous = state.drafts.get(key);
    const at = this.now();
    state.drafts.set(key, {
      chatId: state.chat.id,
      ...(threadId !== undefined ? { threadId } : {}),
      draftId,
      text: parsed.text,
      entities: parsed.entities,
      updatedAt: at,
      updates: previous && previous.draftId === draftId ? previous.updates + 1 : 1,
      canStop: bool(p.can_stop),
      expiresAt: at + DRAFT_TTL_MS,
    });
    return true;
  }

  private sendChatAction(p: Record<string, unknown>): unknown {
    const state = this.chatFromParam(p.chat_id);
    const action = str(p.action);
    if (!action || !CHAT_ACTIONS.has(action)) return bad("wrong parameter action in request");
    const threadId = int(p.message_thread_id);
    if (threadId !== undefined) this.checkThread(state, threadId);
    state.lastAction = { action, at: this.now(), ...(threadId !== undefined ? { threadId } : {}) };
    return true;
  }

  private setMyCommands(p: Record<string, unknown>): unknown {
    const commands = jsonArg(p.commands, "commands");
    if (!Array.isArray(commands)) return bad("field \"commands\" must be an Array");
    if (commands.length > 100) return bad("too many commands specified");
    for (const c of commands as { command?: unknown; description?: unknown }[]) {
      const command = typeof c.command === "string" ? c.command.replace(/^\//, "") : "";
      if (!/^[a-z0-9_]{1,32}$/.test(command)) return bad("BOT_COMMAND_INVALID");
      if (typeof c.description !== "string" || c.description.length < 1 || c.description.length > 256) {
        return bad("command description must be non-empty");
      }
    }
    this.commands = commands;
    return true;
  }

  private answerCallbackQuery(p: Record<string, unknown>): unknown {
    const id = str(p.callback_query_id) ?? "";
    const query = this.callbackQueries.get(id);
    if (!query || query.answered) return bad("query is too old and response timeout expired or query ID is invalid");
    query.answered = true;
    query.answer = {
      ...(str(p.text) !== undefined ? { text: str(p.text) } : {}),
      ...(p.show_alert !== undefined ? { show_alert: bool(p.show_alert) } : {}),
    };
    return true;
  }

  private getChatMember(p: Record<string, unknown>): unknown {
    const state = this.chatFromParam(p.chat_id);
    const userId = int(p.user_id);
    if (userId === undefined) return bad("user_id is empty");
    const member = this.members.get(`${state.chat.id}:${userId}`);
    // Telegram answers this for users it never saw in the chat.
    if (!member) return bad("PARTICIPANT_ID_INVALID");
    const user = this.apiUser(member.user);
    switch (member.status) {
      case "creator":
        return { status: "creator", user, is_anonymous: false };
      case "administrator":
        return {
          status: "administrator", user, can_be_edited: false, is_anonymous: false, can_manage_chat: true, can_delete_messages: true,
          can_manage_video_chats: true, can_restrict_members: true, can_promote_members: false, can_change_info: true, can_invite_users: true,
          can_post_stories: false, can_edit_stories: false, can_delete_stories: false,
        };
      case "restricted":
        return { status: "restricted", user, is_member: true, until_date: 0, can_send_messages: true };
      case "kicked":
        return { status: "kicked", user, until_date: 0 };
      default:
        return { status: member.status, user };
    }
  }

  private deleteMessage(p: Record<string, unknown>): unknown {
    const state = this.chatFromParam(p.chat_id);
    const msg = state.messages.get(int(p.message_id) ?? -1);
    if (!msg || msg.deleted) return bad("message to delete not found");
    if (msg.from.id !== this.me.id && state.chat.type !== "private") return bad("message can't be deleted");
    msg.deleted = true;
    return true;
  }

  // ─── helpers ─────────────────────────────────────────────────────────────────

  private parseText(raw: string, p: Record<string, unknown>): ParsedText {
    return withAutoMentions(this.parseMarkup(raw, p));
  }

  private parseMarkup(raw: string, p: Record<string, unknown>): ParsedText {
    const mode = str(p.parse_mode);
    if (p.entities !== undefined && !mode) {
      const entities = jsonArg(p.entities, "entities");
      return trimParsed({ text: raw, entities: Array.isArray(entities) ? (entities as MessageEntity[]) : [] });
    }
    if (mode === undefined || mode === "") return trimParsed({ text: raw, entities: [] });
    if (mode.toLowerCase() === "html") {
      try {
        return parseTelegramHtml(raw);
      } catch (err) {
        if (err instanceof TelegramHtmlError) throw bad(`can't parse entities: ${err.message}`);
        throw err;
      }
    }
    if (mode === "Markdown" || mode === "MarkdownV2") {
      // Not modelled: the fake keeps the source as plain text (our bot only sends HTML).
      return trimParsed({ text: raw, entities: [] });
    }
    throw bad("unsupported parse_mode");
  }

  private checkMarkup(value: unknown): Record<string, unknown> | undefined {
    if (value === undefined) return undefined;
    const markup = jsonArg(value, "reply markup") as { inline_keyboard?: unknown } | undefined;
    if (!markup || typeof markup !== "object") throw bad("can't parse reply keyboard markup JSON object");
    if (markup.inline_keyboard !== undefined) {
      if (!Array.isArray(markup.inline_keyboard)) throw bad("field \"inline_keyboard\" of the InlineKeyboardMarkup must be an Array of Arrays");
      for (const row of markup.inline_keyboard as unknown[]) {
        if (!Array.isArray(row)) throw bad("field \"inline_keyboard\" of the InlineKeyboardMarkup must be an Array of Arrays");
        for (const button of row as { text?: unknown; callback_data?: unknown; url?: unknown }[]) {
          if (typeof button.text !== "string" || button.text === "") throw bad("text buttons are unallowed in the inline keyboard");
          if (button.callback_data !== undefined) {
            const bytes = Buffer.byteLength(String(button.callback_data), "utf8");
            if (bytes < 1 || bytes > 64) throw bad("BUTTON_DATA_INVALID");
          }
        }
      }
      if ((markup.inline_keyboard as unknown[]).length === 0) return undefined;
    }
    return markup as Record<string, unknown>;
  }

  private checkThread(state: ChatState, threadId: number): void {
    const chat = state.chat;
    if (chat.type === "supergroup" && chat.is_forum) {
      if (!state.topics.has(threadId)) throw bad("message thread not found");
    } else if (chat.type === "supergroup") {
      if (!state.messages.has(threadId)) throw bad("message thread not found");
    } else {
      throw bad("message thread not found");
    }
  }

  private admitFlood(method: string, state: ChatState): void {
    const isGroup = state.chat.type === "group" || state.chat.type === "supergroup";
    const verdict = this.flood.admit(method, state.chat.id, isGroup, this.now());
    if (!verdict.ok) {
      throw new ApiFailure(429, `Too Many Requests: retry after ${verdict.retryAfter}`, { retry_after: verdict.retryAfter });
    }
  }

  private chatFromParam(value: unknown): ChatState {
    const id = int(value);
    if (id === undefined) {
      if (value === undefined || value === "") throw bad("chat_id is empty");
      throw bad("chat not found");
    }
    return this.requireChatOr400(id);
  }

  private requireChatOr400(id: number): ChatState {
    const state = this.chats.get(id);
    if (!state) throw bad("chat not found");
    return state;
  }

  private requireChat(id: number): ChatState {
    const state = this.chats.get(id);
    if (!state) throw new Error(`fake Telegram: no chat ${id} yet (a user must say something first, or addChat)`);
    return state;
  }

  private requireStored(chatId: number, messageId: number): StoredMessage {
    const msg = this.requireChat(chatId).messages.get(messageId);
    if (!msg) throw new Error(`fake Telegram: no message ${messageId} in chat ${chatId}`);
    return msg;
  }

  private chatState(chat: FakeChat): ChatState {
    let state = this.chats.get(chat.id);
    if (!state) {
      state = { chat, nextMessageId: 1, messages: new Map(), topics: new Map(), drafts: new Map() };
      this.chats.set(chat.id, state);
    }
    return state;
  }

  private storeMessage(
    state: ChatState,
    m: Pick<StoredMessage, "from" | "text" | "entities"> &
      Partial<Pick<StoredMessage, "replyToMessageId" | "threadId" | "source" | "parseMode" | "replyMarkup" | "forumTopicCreated" | "media">>,
  ): StoredMessage {
    const chat = state.chat;
    const isForum = chat.type === "supergroup" && chat.is_forum === true;
    let threadId = m.threadId;
    let isTopicMessage = false;
    let replyTo = m.replyToMessageId;
    if (chat.type === "private" || chat.type === "group") {
      threadId = undefined;
    } else if (isForum) {
      if (threadId !== undefined && !m.forumTopicCreated) {
        if (!state.topics.has(threadId)) throw new Error(`fake Telegram: no topic ${threadId} in chat ${chat.id}`);
      }
      if (threadId === undefined && replyTo !== undefined) threadId = state.messages.get(replyTo)?.threadId;
      if (threadId !== undefined) {
        isTopicMessage = true;
        // In a topic, a message that answers nothing in particular replies to the topic's creation message.
        if (replyTo === undefined && !m.forumTopicCreated) replyTo = threadId;
      }
    } else if (replyTo !== undefined) {
      // Ordinary supergroups: a reply belongs to the reply thread of the message it answers.
      const target = state.messages.get(replyTo);
      threadId = target ? (target.threadId ?? target.messageId) : undefined;
    } else {
      threadId = undefined;
    }
    const at = this.now();
    const msg: StoredMessage = {
      chatId: chat.id,
      messageId: state.nextMessageId++,
      ...(threadId !== undefined ? { threadId } : {}),
      isTopicMessage,
      from: m.from,
      date: Math.floor(at / 1000),
      text: m.text,
      entities: m.entities,
      ...(m.source !== undefined ? { source: m.source } : {}),
      ...(m.parseMode !== undefined ? { parseMode: m.parseMode } : {}),
      ...(replyTo !== undefined ? { replyToMessageId: replyTo } : {}),
      ...(m.replyMarkup ? { replyMarkup: m.replyMarkup } : {}),
      ...(m.forumTopicCreated ? { forumTopicCreated: m.forumTopicCreated } : {}),
      ...(m.media ? { media: m.media } : {}),
      sentAt: at,
      editCount: 0,
      deleted: false,
      history: [m.text],
    };
    if (m.forumTopicCreated) msg.threadId = msg.messageId;
    state.messages.set(msg.messageId, msg);
    this.changed();
    return msg;
  }

  private deliversToBot(state: ChatState, msg: StoredMessage): boolean {
    if (!this.privacyMode || state.chat.type === "private") return true;
    if (msg.text.startsWith("/")) return true;
    if (msg.entities.some((e) => e.type === "mention" && msg.text.slice(e.offset, e.offset + e.length).toLowerCase() === `@${this.me.username.toLowerCase()}`)) return true;
    const target = msg.replyToMessageId !== undefined ? state.messages.get(msg.replyToMessageId) : undefined;
    return target !== undefined && !target.forumTopicCreated && target.from.id === this.me.id;
  }

  private apiUser(u: FakeUser): Record<string, unknown> {
    return { id: u.id, is_bot: u.is_bot ?? false, first_name: u.first_name, ...(u.last_name ? { last_name: u.last_name } : {}), ...(u.username ? { username: u.username } : {}), ...(u.language_code ? { language_code: u.language_code } : {}) };
  }

  private apiChat(chat: FakeChat): Record<string, unknown> {
    return { ...chat };
  }

  private toApiMessage(msg: StoredMessage, nested = false): Record<string, unknown> {
    const state = this.chats.get(msg.chatId) as ChatState;
    const out: Record<string, unknown> = {
      message_id: msg.messageId,
      from: this.apiUser(msg.from),
      chat: this.apiChat(state.chat),
      date: msg.date,
    };
    if (msg.threadId !== undefined) out.message_thread_id = msg.threadId;
    if (msg.isTopicMessage) out.is_topic_message = true;
    if (msg.forumTopicCreated) out.forum_topic_created = msg.forumTopicCreated;
    else if (msg.media) Object.assign(out, msg.media, msg.text ? { caption: msg.text } : {});
    else out.text = msg.text;
    if (msg.entities.length > 0) out[msg.media ? "caption_entities" : "entities"] = msg.entities;
    if (msg.editedAt !== undefined) out.edit_date = Math.floor(msg.editedAt / 1000);
    if (msg.replyMarkup) out.reply_markup = msg.replyMarkup;
    if (!nested && msg.replyToMessageId !== undefined) {
      const target = state.messages.get(msg.replyToMessageId);
      if (target && !target.deleted) out.reply_to_message = this.toApiMessage(target, true);
    }
    return out;
  }

  private view(m: StoredMessage): ChatMessageView {
    const keyboard = (m.replyMarkup as { inline_keyboard?: ChatMessageView["buttons"] } | undefined)?.inline_keyboard;
    return {
      chatId: m.chatId,
      messageId: m.messageId,
      ...(m.threadId !== undefined ? { threadId: m.threadId } : {}),
      from: m.from,
      fromBot: m.from.id === this.me.id,
      text: m.text,
      entities: m.entities,
      ...(m.source !== undefined ? { source: m.source } : {}),
      ...(m.parseMode !== undefined ? { parseMode: m.parseMode } : {}),
      ...(m.replyToMessageId !== undefined ? { replyToMessageId: m.replyToMessageId } : {}),
      ...(keyboard ? { buttons: keyboard } : {}),
      sentAt: m.sentAt,
      editCount: m.editCount,
      ...(m.editedAt !== undefined ? { editedAt: m.editedAt } : {}),
      deleted: m.deleted,
      history: [...m.history],
    };
  }

  // ─── webhook delivery ────────────────────────────────────────────────────────

  private kickWebhook(): void {
    if (!this.webhook || this.delivering || this.closed || this.queue.length === 0) return;
    this.delivering = true;
    void this.deliverNext();
  }

  /** Delivers the oldest update; a non-2xx answer or a network error is retried after a pause, like Telegram does. */
  private async deliverNext(): Promise<void> {
    const hook = this.webhook;
    const next = this.queue[0];
    if (!hook || !next || this.closed) {
      this.delivering = false;
      return;
    }
    const attempt: WebhookAttempt = { at: this.now(), updateId: next.update_id };
    let delivered = false;
    let causeCode: string | undefined;
    try {
      const res = await fetch(hook.url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          ...(hook.secretToken ? { "x-telegram-bot-api-secret-token": hook.secretToken } : {}),
        },
        body: JSON.stringify(next.update),
        signal: AbortSignal.timeout(10_000),
      });
      attempt.status = res.status;
      const body = await res.text();
      delivered = res.status >= 200 && res.status < 300;
      if (delivered && body.trim().startsWith("{")) {
        // A webhook may answer with one method call in its response body.
        const call = JSON.parse(body) as Record<string, unknown>;
        if (typeof call.method === "string") {
          const { method, ...params } = call;
          const outcome = await this.dispatch(method as string, params);
          if (outcome instanceof ApiFailure) this.record(method as string, params, outcome.code, false, outcome.description);
          else this.record(method as string, params, 200, true, undefined, outcome);
        }
      }
    } catch (err) {
      attempt.error = (err as Error).message;
      causeCode = ((err as Error).cause as { code?: string } | undefined)?.code;
    }
    if (!delivered) {
      // Telegram's own wording: "Connection refused", "Wrong response from the webhook: 502 Bad Gateway", …
      const message =
        attempt.status !== undefined
          ? `Wrong response from the webhook: ${attempt.status} ${STATUS_TEXT[attempt.status] ?? ""}`.trim()
          : causeCode === "ECONNREFUSED"
            ? "Connection refused"
            : `Connection error: ${attempt.error ?? "unknown"}`;
      this.webhookLastError = { date: Math.floor(this.now() / 1000), message };
    }
    this.webhookAttempts.push(attempt);
    if (delivered) this.queue = this.queue.filter((u) => u.update_id !== next.update_id);
    this.changed();
    if (this.closed) return;
    this.deliveryTimer = setTimeout(() => void this.deliverNext(), delivered ? 0 : (this.options.webhookRetryDelayMs ?? 100));
  }
}

/** Starts a fake Telegram Bot API server on loopback. */
export function startFakeTelegram(options: FakeTelegramOptions = {}): Promise<FakeTelegram> {
  return FakeTelegram.start(options);
}

const CLIENT_GONE = Symbol("client gone");

/** Reason phrases Telegram quotes in last_error_message. */
const STATUS_TEXT: Record<number, string> = { 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 500: "Internal Server Error", 502: "Bad Gateway", 503: "Service Unavailable", 504: "Gateway Timeout" };

// ─── parameter decoding: JSON bodies carry typed values, forms carry strings ─────

async function readParams(req: IncomingMessage, url: URL): Promise<Record<string, unknown>> {
  const params: Record<string, unknown> = Object.fromEntries(url.searchParams);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > 50 * 1024 * 1024) throw new Error("Request Entity Too Large");
    chunks.push(chunk as Buffer);
  }
  const body = Buffer.concat(chunks);
  if (body.length === 0) return params;
  const type = (req.headers["content-type"] ?? "").toLowerCase();
  if (type.startsWith("application/json")) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString("utf8"));
    } catch {
      throw new Error("Bad Request: can't parse JSON object");
    }
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) Object.assign(params, parsed);
    return params;
  }
  if (type.startsWith("application/x-www-form-urlencoded")) {
    Object.assign(params, Object.fromEntries(new URLSearchParams(body.toString("utf8"))));
    return params;
  }
  if (type.startsWith("multipart/form-data")) {
    const form = await new Response(body, { headers: { "content-type": req.headers["content-type"] as string } }).formData();
    for (const [key, value] of form.entries()) {
      params[key] = typeof value === "string" ? value : { file: value.name, size: value.size };
    }
    return params;
  }
  return params;
}

function int(value: unknown): number | undefined {
  if (typeof value === "number" && Number.isInteger(value)) return value;
  if (typeof value === "string" && /^-?\d+$/.test(value.trim())) return Number(value.trim());
  return undefined;
}

function str(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return undefined;
}

function bool(value: unknown): boolean {
  return value === true || value === "true" || value === "1" || value === 1;
}

function jsonArg(value: unknown, what: string): unknown {
  if (typeof value !== "string") return value;
  try {
    return JSON.parse(value);
  } catch {
    throw bad(`can't parse ${what} JSON object`);
  }
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}
