/**
 * Shared pieces of the fault-injection suite (test/e2e/faults-*.test.ts): short queue
 * timings so recoveries happen in seconds, bounded polling, and the audit that turns a
 * fake Telegram chat into the two numbers that matter: messages lost, answers duplicated.
 */
import { vi } from "vitest";
import type { FakeTelegram } from "../fakes/telegram-server.js";
import type { Metrics } from "../../src/observability/metrics.js";

/** Queue timings of the fault tests: a dead worker's job is recovered in ~2 s, retries come 100 ms, 200 ms apart. */
export const FAST_QUEUE = {
  lockDurationMs: 2000,
  stalledIntervalMs: 500,
  backoffMs: 100,
  attempts: 3,
  repairIntervalMs: 500,
} as const;

/** The same timings as environment variables, for role processes (src/main.ts). */
export const FAST_QUEUE_ENV: Record<string, string> = {
  QUEUE_LOCK_MS: String(FAST_QUEUE.lockDurationMs),
  QUEUE_STALLED_CHECK_MS: String(FAST_QUEUE.stalledIntervalMs),
  QUEUE_RETRY_BACKOFF_MS: String(FAST_QUEUE.backoffMs),
  QUEUE_ATTEMPTS: String(FAST_QUEUE.attempts),
};

/** Polls `check` (vitest's `vi.waitFor`) until it returns something truthy; throws naming `what` after `timeoutMs`. */
export function waitUntil<T>(what: string, check: () => T | Promise<T>, timeoutMs = 8000): Promise<NonNullable<T>> {
  return vi.waitFor(
    async () => {
      const value = await check();
      if (!value) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
      return value as NonNullable<T>;
    },
    { timeout: timeoutMs, interval: 25 },
  );
}

/** How many jobs the worker finished with `outcome` (done, retried, failed, cancelled, interrupted) so far. */
export async function jobCount(
  metrics: Metrics,
  outcome: "done" | "retried" | "failed" | "cancelled" | "interrupted",
): Promise<number> {
  const metric = await metrics.jobs.get();
  return metric.values.filter((v) => v.labels.outcome === outcome).reduce((sum, v) => sum + v.value, 0);
}

/** A question a user asked, and the text its answer must end with. */
export interface Asked {
  chatId: number;
  messageId: number;
  expected: string;
}

/** What the chats show against what was asked (see `auditAnswers`). */
export interface AnswerAudit {
  asked: number;
  /** Questions with no bot message showing their expected answer. */
  lost: Asked[];
  /** Questions with more than one bot message replying to them. */
  duplicated: { asked: Asked; replies: string[] }[];
  /** Bot messages replying to a question whose text is not exactly the expected answer. */
  wrong: { asked: Asked; text: string }[];
  /** Bot messages in the audited chats that reply to no question that was asked. */
  orphans: { chatId: number; messageId: number; text: string }[];
}

/**
 * Audits Telegram chats as a user would read them: every question must have exactly one
 * bot message replying to it (reply_parameters), showing exactly the expected answer, and the
 * bot must have said nothing else. Answers short enough for one message are assumed.
 */
export function auditAnswers(tg: FakeTelegram, asked: readonly Asked[]): AnswerAudit {
  const audit: AnswerAudit = { asked: asked.length, lost: [], duplicated: [], wrong: [], orphans: [] };
  const chats = [...new Set(asked.map((a) => a.chatId))];
  const claimed = new Set<string>();
  for (const a of asked) {
    const replies = tg.botMessages(a.chatId).filter((m) => m.replyToMessageId === a.messageId);
    for (const r of replies) claimed.add(`${r.chatId}/${r.messageId}`);
    if (!replies.some((r) => r.text === a.expected)) audit.lost.push(a);
    if (replies.length > 1) audit.duplicated.push({ asked: a, replies: replies.map((r) => r.text) });
    for (const r of replies) if (r.text !== a.expected) audit.wrong.push({ asked: a, text: r.text });
  }
  for (const chatId of chats) {
    for (const m of tg.botMessages(chatId)) {
      if (!claimed.has(`${m.chatId}/${m.messageId}`))
        audit.orphans.push({ chatId, messageId: m.messageId, text: m.text });
    }
  }
  return audit;
}

/** True when every question got exactly one answer (the audit's lists are all empty). */
export function allAnsweredOnce(audit: AnswerAudit): boolean {
  return (
    audit.lost.length === 0 && audit.duplicated.length === 0 && audit.wrong.length === 0 && audit.orphans.length === 0
  );
}
