/**
 * The fake Telegram's world as it stands: the chats with their messages, topics and drafts, the
 * members' statuses, the updates queue and the long poll or webhook reading it, the files users
 * sent, and what the fake recorded for assertions, with the change notifications `waitFor`
 * listens to. Everything else of the fake reads and writes this one object.
 */
import { EventEmitter } from "node:events";
import type { MessageEntity } from "grammy/types";
import { DOCUMENTED_FLOOD_LIMITS, FloodControl } from "../telegram-flood-control.js";
import { FakeTelegramFiles } from "../telegram-files.js";
import type {
  ChatMemberStatus,
  DraftView,
  FakeChat,
  FakeTelegramOptions,
  FakeUser,
  InjectedFailure,
  RecordedCall,
  WebhookAttempt,
} from "../telegram-server.js";
import type { ApiFailure } from "./method-outcomes.js";

/** A message as the fake keeps it (the views tests read are built from it). */
export interface StoredMessage {
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

/** One chat the bot is in. */
export interface ChatState {
  chat: FakeChat;
  nextMessageId: number;
  messages: Map<number, StoredMessage>;
  topics: Map<number, string>;
  drafts: Map<string, DraftView & { expiresAt: number }>;
  lastAction?: { action: string; at: number; threadId?: number };
}

/** An update waiting to be confirmed. */
export interface QueuedUpdate {
  update_id: number;
  type: string;
  update: Record<string, unknown>;
}

/** The getUpdates long poll waiting for updates. */
export interface Poller {
  limit: number;
  finish(updates: QueuedUpdate[] | ApiFailure): void;
}

/** The bot as getMe returns it. */
export type FakeBot = FakeUser & { is_bot: true; username: string };

/** The shared state of one running fake (fields that methods replace are plain mutable fields). */
export interface TelegramState {
  readonly apiRoot: string;
  readonly token: string;
  readonly me: FakeBot;
  readonly options: FakeTelegramOptions;
  readonly now: () => number;
  readonly flood: FloodControl;
  readonly privacyMode: boolean;
  readonly events: EventEmitter;
  readonly chats: Map<number, ChatState>;
  readonly recorded: RecordedCall[];
  readonly arrived: { at: number; method: string; params: Record<string, unknown> }[];
  readonly failures: Map<string, InjectedFailure[]>;
  readonly callbackQueries: Map<string, { answered: boolean; answer?: Record<string, unknown> }>;
  readonly webhookAttempts: WebhookAttempt[];
  /** `chatId:userId` → the member's status and who they are (getChatMember). */
  readonly members: Map<string, { user: FakeUser; status: ChatMemberStatus }>;
  /** Photos and documents users sent; getFile and the file download URL serve them. */
  readonly files: FakeTelegramFiles;
  queue: QueuedUpdate[];
  nextUpdateId: number;
  allowedUpdates: string[] | undefined;
  poller: Poller | undefined;
  webhook: { url: string; secretToken?: string } | undefined;
  /** The most recent failed webhook delivery, as getWebhookInfo reports it. */
  webhookLastError: { date: number; message: string } | undefined;
  delivering: boolean;
  deliveryTimer: NodeJS.Timeout | undefined;
  commands: unknown[];
  callbackSeq: number;
  closed: boolean;
  /** Tells waiters something changed, once the current request has been fully applied and recorded. */
  changed(): void;
  /** Records one answered call. */
  record(
    method: string,
    params: Record<string, unknown>,
    status: number,
    ok: boolean,
    description?: string,
    result?: unknown,
  ): void;
}

/** Builds the state of a fresh fake listening on `port` (the token names the port, so fakes never share one). */
export function createTelegramState(port: number, options: FakeTelegramOptions): TelegramState {
  const botId = options.bot?.id ?? 7_000_000_001;
  const now = options.now ?? Date.now;
  const events = new EventEmitter();
  events.setMaxListeners(1000);
  const recorded: RecordedCall[] = [];
  let seq = 0;
  let changeScheduled = false;
  const changed = (): void => {
    if (changeScheduled) return;
    changeScheduled = true;
    setImmediate(() => {
      changeScheduled = false;
      events.emit("change");
    });
  };
  return {
    apiRoot: `http://127.0.0.1:${port}`,
    token: `${botId}:AAFakeTokenForTests_${port}`,
    me: {
      id: botId,
      is_bot: true,
      first_name: options.bot?.first_name ?? "Test Bot",
      username: options.bot?.username ?? "test_bot",
    },
    options,
    now,
    flood: new FloodControl({ ...DOCUMENTED_FLOOD_LIMITS, ...options.floodLimits }),
    privacyMode: options.privacyMode ?? false,
    events,
    chats: new Map(),
    recorded,
    arrived: [],
    failures: new Map(),
    callbackQueries: new Map(),
    webhookAttempts: [],
    members: new Map(),
    files: new FakeTelegramFiles(),
    queue: [],
    nextUpdateId: options.firstUpdateId ?? 500_000_001,
    allowedUpdates: undefined,
    poller: undefined,
    webhook: undefined,
    webhookLastError: undefined,
    delivering: false,
    deliveryTimer: undefined,
    commands: [],
    callbackSeq: 1,
    closed: false,
    changed,
    record(method, params, status, ok, description, result) {
      recorded.push({
        seq: ++seq,
        at: now(),
        method,
        params,
        status,
        ok,
        ...(description !== undefined ? { description } : {}),
        ...(result !== undefined ? { result } : {}),
      });
      changed();
    },
  };
}

/** The state of a chat, registering it the first time the fake hears of it. */
export function chatStateOf(state: TelegramState, chat: FakeChat): ChatState {
  let found = state.chats.get(chat.id);
  if (!found) {
    found = { chat, nextMessageId: 1, messages: new Map(), topics: new Map(), drafts: new Map() };
    state.chats.set(chat.id, found);
  }
  return found;
}

/** A chat a test refers to; throws (a test mistake, not an API error) when the fake does not know it. */
export function requireChat(state: TelegramState, id: number): ChatState {
  const found = state.chats.get(id);
  if (!found) throw new Error(`fake Telegram: no chat ${id} yet (a user must say something first, or addChat)`);
  return found;
}

/** A message a test refers to; throws when the fake does not hold it. */
export function requireStored(state: TelegramState, chatId: number, messageId: number): StoredMessage {
  const msg = requireChat(state, chatId).messages.get(messageId);
  if (!msg) throw new Error(`fake Telegram: no message ${messageId} in chat ${chatId}`);
  return msg;
}
