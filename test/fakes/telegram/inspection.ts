/**
 * How a test looks at the fake: the calls it answered and the requests as they arrived, the
 * messages, drafts and chat actions users see, the updates still pending, the webhook, and
 * waiting for a condition (re-checked on every change the fake notices, and polled for things
 * outside it).
 */
import type { ChatMessageView, FakeTelegram } from "../telegram-server.js";
import { viewOf } from "./api-objects.js";
import { int } from "./method-params.js";
import type { TelegramState } from "./state.js";

/** What tests read (see FakeTelegram for each). */
export type FakeTelegramInspection = Pick<
  FakeTelegram,
  | "calls"
  | "requests"
  | "getUpdatesOffsets"
  | "isLongPolling"
  | "floodViolations"
  | "messages"
  | "botMessages"
  | "visibleText"
  | "draft"
  | "lastChatAction"
  | "registeredCommands"
  | "callbackAnswer"
  | "pendingUpdateIds"
  | "webhookInfo"
  | "webhookDeliveries"
  | "waitFor"
>;

/** Resolves with the predicate's first truthy value; rejects after `timeoutMs` with the recent calls. */
function waitFor<T>(
  state: TelegramState,
  predicate: () => T | undefined | null | false,
  opts: { timeoutMs?: number; what?: string } = {},
): Promise<T> {
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
      const recent = state.recorded
        .slice(-8)
        .map((c) => `${c.method} ${c.status}${c.description ? ` ${c.description}` : ""}`)
        .join("; ");
      reject(
        new Error(
          `fake Telegram: timed out after ${timeoutMs} ms waiting for ${opts.what ?? "a condition"}; recent calls: ${recent}`,
        ),
      );
    }, timeoutMs);
    const ticker = setInterval(check, 25);
    const cleanup = () => {
      clearTimeout(timer);
      clearInterval(ticker);
      state.events.off("change", check);
    };
    state.events.on("change", check);
  });
}

/** The test's view of the world. */
export function createInspection(state: TelegramState): FakeTelegramInspection {
  const { recorded, arrived, chats, callbackQueries, now } = state;
  const requests: FakeTelegram["requests"] = (method) => {
    const m = method?.toLowerCase();
    return arrived.filter((c) => m === undefined || c.method.toLowerCase() === m);
  };
  const messages: FakeTelegram["messages"] = (chatId, opts = {}) => {
    const chatState = chats.get(chatId);
    if (!chatState) return [];
    return [...chatState.messages.values()]
      .filter((m) => !m.forumTopicCreated)
      .filter((m) => opts.includeDeleted || !m.deleted)
      .filter((m) => opts.threadId === undefined || m.threadId === opts.threadId)
      .map((m) => viewOf(state, m));
  };
  const botMessages = (chatId: number, opts: { threadId?: number } = {}): ChatMessageView[] =>
    messages(chatId, opts).filter((m) => m.fromBot);
  return {
    calls(method) {
      const m = method?.toLowerCase();
      return recorded.filter((c) => m === undefined || c.method.toLowerCase() === m);
    },
    requests,
    getUpdatesOffsets: () => requests("getUpdates").map((r) => int(r.params.offset) ?? 0),
    isLongPolling: () => state.poller !== undefined,
    floodViolations: () => [...state.flood.violations],
    messages,
    botMessages,
    visibleText: (chatId, opts = {}) =>
      botMessages(chatId, opts)
        .map((m) => m.text)
        .join("\n"),
    draft(chatId, threadId) {
      const d = chats.get(chatId)?.drafts.get(String(threadId ?? 0));
      if (!d || d.expiresAt <= now()) return undefined;
      const { expiresAt: _expiresAt, ...view } = d;
      return view;
    },
    lastChatAction: (chatId) => chats.get(chatId)?.lastAction,
    registeredCommands: () => state.commands,
    callbackAnswer: (queryId) => callbackQueries.get(queryId)?.answer,
    pendingUpdateIds: () => state.queue.map((u) => u.update_id),
    webhookInfo: () => state.webhook,
    webhookDeliveries: () => [...state.webhookAttempts],
    waitFor: (predicate, opts) => waitFor(state, predicate, opts),
  };
}
