/**
 * Answering a Telegram webhook request within a deadline. grammY's own timeout answers in time but
 * leaves the update's later rejection unhandled (a crash, with the token in Node's dump); here the
 * update keeps running after the deadline and whatever it ends with is logged.
 */
import type { IncomingMessage, ServerResponse } from "node:http";

/** Where the outcome of a late or failed update is logged. */
export interface WebhookDeadlineLog {
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/**
 * Runs grammY's webhook handler: a failure is answered 500, an update still running after `timeoutMs`
 * 503 (either way Telegram delivers it again; the queue's dedupe keeps a late success from being
 * answered twice). Never rejects.
 */
export async function handleWebhookWithDeadline(
  handler: (req: IncomingMessage, res: ServerResponse) => Promise<unknown>,
  req: IncomingMessage,
  res: ServerResponse,
  opts: { timeoutMs: number; log: WebhookDeadlineLog; errorText(err: unknown): string },
): Promise<void> {
  const answer = (status: number) => {
    if (res.headersSent) return;
    res.statusCode = status;
    res.end();
  };
  let timer: NodeJS.Timeout | undefined;
  try {
    const handling = handler(req, res);
    const late = new Promise<"late">((resolve) => (timer = setTimeout(() => resolve("late"), opts.timeoutMs)));
    if ((await Promise.race([handling, late])) === "late") {
      opts.log.warn(
        { timeoutMs: opts.timeoutMs },
        "webhook update still being handled; answered 503 so Telegram delivers it again",
      );
      answer(503);
      handling.catch((err: unknown) =>
        opts.log.error({ err: opts.errorText(err) }, "webhook update failed after its deadline"),
      );
    }
  } catch (err) {
    // Not enqueued: a 5xx makes Telegram deliver this update again later.
    opts.log.error({ err: opts.errorText(err) }, "webhook update failed");
    answer(500);
  } finally {
    clearTimeout(timer);
  }
}
