/**
 * Shared set-up for the Telegram end-to-end scenarios: the fake Bot API (strict flood
 * limits, its default), the fake model and web servers, and the whole bot in-process
 * (bots role + worker role against real Redis). Plus the readings the scenarios share:
 * which requests reached a chat and when, what the model was sent, when a model
 * response ended.
 */
import { expect } from "vitest";
import {
  startFakeTelegram,
  type FakeTelegram,
  type FakeTelegramOptions,
  type RecordedCall,
} from "../fakes/telegram-server.js";
import {
  startFakeOpenAI,
  type FakeOpenAI,
  type FakeOpenAIOptions,
  type RecordedRequest,
} from "../fakes/openai-server.js";
import { startFakeWeb, type FakeWeb } from "../fakes/web-server.js";
import { qwen3Encoder } from "../fakes/llama-extras.js";
import { startStack, type Stack, type StackOptions } from "../support/stack.js";

/** A running Telegram deployment against fakes. */
export interface TelegramE2E {
  tg: FakeTelegram;
  model: FakeOpenAI;
  web: FakeWeb;
  stack: Stack;
  /** Environment of this deployment (for starting more roles on the same fakes and Redis prefix). */
  env: Record<string, string>;
  close(): Promise<void>;
}

/** Options of `startTelegramE2E`. */
export interface TelegramE2EOptions {
  fake?: FakeTelegramOptions;
  worker?: StackOptions["worker"];
  roles?: StackOptions["roles"];
  env?: Record<string, string>;
  /** Options of the fake model server (e.g. the models it lists, `props: { vision: true }`). */
  model?: FakeOpenAIOptions;
}

/** Starts the fakes and the stack; `close` stops everything it started, in reverse. */
export async function startTelegramE2E(opts: TelegramE2EOptions = {}): Promise<TelegramE2E> {
  // The fake model's /tokenize needs Qwen3's vocabulary, loaded once per test process (seconds on a busy machine):
  // a head start while the bot starts, so fewer jobs sit out the worker's 5 s count timeout waiting for it. A test
  // that must not wait on it loads it in `beforeAll(qwen3Encoder)`, outside its own timeout.
  void qwen3Encoder().catch(() => undefined);
  const tg = await startFakeTelegram(opts.fake);
  const model = await startFakeOpenAI(opts.model);
  const web = await startFakeWeb();
  const env = {
    TELEGRAM_BOT_TOKEN: tg.token,
    TELEGRAM_API_ROOT: tg.apiRoot,
    OPENAI_BASE_URL: model.url,
    WEATHER_API_BASE: web.url,
    ...opts.env,
  };
  let stack: Stack;
  try {
    stack = await startStack({
      env,
      ...(opts.worker ? { worker: opts.worker } : {}),
      ...(opts.roles ? { roles: opts.roles } : {}),
    });
  } catch (error) {
    await Promise.allSettled([tg.close(), model.close(), web.close()]);
    throw error;
  }
  return {
    tg,
    model,
    web,
    stack,
    env: stack.env,
    async close() {
      await stack.close();
      await Promise.allSettled([tg.close(), model.close(), web.close()]);
    },
  };
}

/** Methods that put text into a chat and count against Telegram's flood limits. */
export const MESSAGE_METHODS = ["sendMessage", "editMessageText"] as const;

/** Calls the fake answered for one chat (optionally only some methods), in order. */
export function callsTo(tg: FakeTelegram, chatId: number, methods?: readonly string[]): RecordedCall[] {
  const wanted = methods?.map((m) => m.toLowerCase());
  return tg
    .calls()
    .filter((c) => Number(c.params.chat_id) === chatId)
    .filter((c) => wanted === undefined || wanted.includes(c.method.toLowerCase()));
}

/** Requests as they arrived at the fake for one chat (before any answer), in order. */
export function arrivalsAt(
  tg: FakeTelegram,
  chatId: number,
  methods: readonly string[],
): { at: number; method: string; params: Record<string, unknown> }[] {
  const wanted = methods.map((m) => m.toLowerCase());
  return tg.requests().filter((r) => Number(r.params.chat_id) === chatId && wanted.includes(r.method.toLowerCase()));
}

/** Smallest gap between consecutive calls (Infinity for fewer than two). */
export function smallestGapMs(calls: readonly { at: number }[]): number {
  let smallest = Number.POSITIVE_INFINITY;
  for (let i = 1; i < calls.length; i++)
    smallest = Math.min(smallest, (calls[i] as { at: number }).at - (calls[i - 1] as { at: number }).at);
  return smallest;
}

/** The conversation the model was sent, as `role: content` pairs (system prompt included). */
export function sentMessages(request: RecordedRequest | undefined): { role: string; content: string }[] {
  expect(request, "a model request").toBeDefined();
  return (request?.body.messages ?? []).map((m) => ({
    role: String(m.role),
    content: typeof m.content === "string" ? m.content : JSON.stringify(m.content),
  }));
}

/** The conversation without the system prompt. */
export function sentHistory(request: RecordedRequest | undefined): { role: string; content: string }[] {
  return sentMessages(request).filter((m) => m.role !== "system");
}

/**
 * When the fake model's response to `request` was over (finished, or abandoned by the client).
 * Call it while the response is still running: the time is taken when the outcome settles.
 */
export function responseEnd(request: RecordedRequest): Promise<{ at: number; outcome: string }> {
  return request.outcome.then((outcome) => ({ at: Date.now(), outcome }));
}

/** Resolves like `promise`, or rejects after `ms` naming what did not happen (instead of running into the test timeout). */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Asserts the fake saw no flood violation; on failure the message lists the chat's requests around it. */
export function expectNoFlood(tg: FakeTelegram): void {
  const violations = tg.floodViolations();
  if (violations.length === 0) return;
  const chats = new Set(violations.map((v) => v.chatId));
  const start = Math.min(...violations.map((v) => v.at)) - 3000;
  const timeline = tg
    .calls()
    .filter((c) => chats.has(Number(c.params.chat_id)) && c.at >= start && c.method !== "getUpdates")
    .map(
      (c) =>
        `${c.at - start}ms ${c.method} ${c.status} ${JSON.stringify(String(c.params.text ?? c.params.action ?? "")).slice(0, 40)}`,
    )
    .join("\n");
  expect(violations, `flood violations; requests to those chats:\n${timeline}`).toEqual([]);
}

/**
 * Waits until the last bot message in a chat is ~1 s old, as a person reading it would. The adapter's
 * own replies (command answers) are not paced together with the worker's messages, so a user answering
 * within the same second could make the two meet inside Telegram's one-message-a-second budget.
 */
export async function afterReading(tg: FakeTelegram, chatId: number): Promise<void> {
  const last = Math.max(0, ...tg.botMessages(chatId).map((m) => Math.max(m.sentAt, m.editedAt ?? 0)));
  const waitMs = last + 1100 - Date.now();
  // Kept sleep: the user's own pause, part of the scenario (a person reading), not a wait for the bot.
  if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs));
}
