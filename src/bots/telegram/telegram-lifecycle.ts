/**
 * The Telegram adapter's lifecycle: start (getMe, the command menu, then confirmed long polling or the
 * webhook), stop, and the webhook handler, mounted by the composition root on the role's HTTP server.
 */
import { createHash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { webhookCallback, type Bot } from "grammy";
import { startConfirmedPolling, type ConfirmedPolling } from "./confirmed-polling.js";
import type { Logger } from "pino";

/** The subset of a pino logger the adapter writes to. */
export type TelegramLogger = Pick<Logger, "debug" | "info" | "warn" | "error">;

/** How the adapter receives: the options of its lifecycle. */
export interface TelegramLifecycleOptions {
  token: string;
  /** Webhook mode: Telegram POSTs updates to this public HTTPS `url` (setWebhook). */
  webhook?: { url: string };
  /** getUpdates long-poll timeout; default 30 s. */
  pollingTimeoutSeconds?: number;
  /** How long stop() waits for updates being handled; default 10 s. */
  stopTimeoutMs?: number;
  /** Called when polling ends on its own (wrong token, another instance polling: 401/409). */
  onFatal?: (error: unknown) => void;
}

/** Updates the bot asks Telegram for. */
export const TELEGRAM_ALLOWED_UPDATES = ["message", "callback_query", "stopped_message_generation"] as const;

/** An error as one log-safe line. */
export function errorText(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}

/** Start, stop and the webhook handler of one adapter. */
export function createTelegramLifecycle(deps: {
  bot: Bot;
  opts: TelegramLifecycleOptions;
  log: TelegramLogger;
  stopping: AbortController;
  commands: readonly { command: string; description: string }[];
}): {
  start(): Promise<void>;
  stop(): Promise<void>;
  handleWebhook(req: IncomingMessage, res: ServerResponse): Promise<void>;
} {
  const { bot, opts, log, stopping } = deps;
  // Telegram sends it back in X-Telegram-Bot-Api-Secret-Token: updates from anyone else are refused.
  const webhookSecret = createHash("sha256").update(`webhook:${opts.token}`).digest("hex");
  let polling: ConfirmedPolling | undefined;
  let webhookHandler: ((req: IncomingMessage, res: ServerResponse) => Promise<void>) | undefined;

  return {
    /**
     * A failure is answered 500, an update still running after 10 s 503: either way Telegram delivers it
     * again, and the queue's dedupe keeps a late success from being answered twice. grammY's own timeout
     * would leave the update's later rejection unhandled (a crash, with the token in Node's dump).
     */
    async handleWebhook(req, res) {
      const answer = (status: number) => {
        if (res.headersSent) return;
        res.statusCode = status;
        res.end();
      };
      if (!webhookHandler) return answer(503);
      let timer: NodeJS.Timeout | undefined;
      try {
        const handling = webhookHandler(req, res);
        const late = new Promise<"late">((resolve) => (timer = setTimeout(() => resolve("late"), 10_000)));
        if ((await Promise.race([handling, late])) === "late") {
          log.warn(
            { timeoutMs: 10_000 },
            "webhook update still being handled; answered 503 so Telegram delivers it again",
          );
          answer(503);
          handling.catch((err: unknown) =>
            log.error({ err: errorText(err) }, "webhook update failed after its deadline"),
          );
        }
      } catch (err) {
        log.error({ err: errorText(err) }, "webhook update failed");
        answer(500);
      } finally {
        clearTimeout(timer);
      }
    },
    async start() {
      await bot.init();
      try {
        await bot.api.setMyCommands(deps.commands.map((c) => ({ ...c })));
      } catch (err) {
        log.warn({ err: errorText(err) }, "setMyCommands failed; the command menu may be stale");
      }
      if (opts.webhook) {
        webhookHandler = webhookCallback(bot, "http", {
          secretToken: webhookSecret,
          timeoutMilliseconds: Infinity,
        }) as (req: IncomingMessage, res: ServerResponse) => Promise<void>;
        await bot.api.setWebhook(opts.webhook.url, {
          secret_token: webhookSecret,
          allowed_updates: [...TELEGRAM_ALLOWED_UPDATES],
        });
        log.info({ username: bot.botInfo.username, url: opts.webhook.url }, "Telegram webhook set");
        return;
      }
      // A webhook left over from an earlier deployment would make getUpdates fail with 409; pending updates are kept.
      await bot.api.deleteWebhook({ drop_pending_updates: false });
      polling = startConfirmedPolling(bot, {
        timeoutSeconds: opts.pollingTimeoutSeconds ?? 30,
        allowedUpdates: TELEGRAM_ALLOWED_UPDATES,
        onHandlerError: (error) => log.error({ err: errorText(error) }, "handling a Telegram update failed"),
      });
      polling.done.catch((err: unknown) => {
        log.error({ err: errorText(err) }, "Telegram polling stopped");
        opts.onFatal?.(err);
      });
      log.info({ username: bot.botInfo.username }, "Telegram long polling started");
    },
    async stop() {
      stopping.abort(new Error("adapter stopping"));
      if (!polling) return;
      const timeoutMs = opts.stopTimeoutMs ?? 10_000;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        polling.stop().catch(() => undefined),
        new Promise<void>((resolve) => {
          timer = setTimeout(() => {
            log.warn({ timeoutMs }, "Telegram adapter stop timed out; unfinished updates will be delivered again");
            resolve();
          }, timeoutMs);
        }),
      ]);
      clearTimeout(timer);
    },
  };
}
