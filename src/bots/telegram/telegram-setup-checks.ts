/**
 * Telegram set-up checks for the doctor, through grammY's Api (no polling bot):
 * the token is valid (getMe), what privacy mode means for this bot, and in
 * webhook mode whether Telegram can reach the webhook (getWebhookInfo).
 */
import { Api, GrammyError, HttpError } from "grammy";
import { findingsOf, type SetupFinding } from "../../contracts/setup-finding.js";
import { telegramClientOptions } from "./telegram-client.js";

const f = findingsOf("Telegram");

/** What the Telegram checks need. */
export interface TelegramCheckOptions {
  token: string;
  apiRoot: string;
  /** TELEGRAM_WEBHOOK_URL; unset means long polling. */
  webhookUrl?: string;
  /** HTTP_PORT, where the webhook is served. */
  httpPort: number;
}

/** getMe: the token is valid; on failure the remaining checks cannot run. */
async function checkToken(api: Api, apiRoot: string): Promise<{ finding: SetupFinding; canReadAll?: boolean }> {
  try {
    const me = await api.getMe();
    return {
      finding: f.pass("token", `token valid: @${me.username} (id ${me.id})`),
      canReadAll: me.can_read_all_group_messages,
    };
  } catch (error) {
    const [problem, fix] =
      error instanceof GrammyError && (error.error_code === 401 || error.error_code === 404)
        ? [
            `TELEGRAM_BOT_TOKEN is rejected (${error.error_code} ${error.description})`,
            "copy the token again from @BotFather (/mybots → your bot → API Token)",
          ]
        : error instanceof HttpError
          ? [
              `cannot reach the Bot API at ${apiRoot} (${(error.error as Error)?.message ?? error.message})`,
              "check the network, a proxy, or TELEGRAM_API_ROOT",
            ]
          : [`getMe failed: ${(error as Error).message}`, "check TELEGRAM_BOT_TOKEN and TELEGRAM_API_ROOT"];
    return { finding: f.fail("token", problem, fix) };
  }
}

/** Privacy mode is stated, not judged: the bot answers only what privacy mode delivers anyway. */
function statePrivacy(canReadAll: boolean | undefined): SetupFinding {
  return f.pass(
    "privacy mode",
    canReadAll
      ? "privacy mode is off: the bot receives every group message and still answers only addressed ones"
      : "privacy mode is on: in groups the bot receives commands, @mentions and replies to its own messages, which is all it answers",
  );
}

/** Webhook mode: Telegram delivers to our URL and its last attempt did not fail. */
async function checkWebhook(api: Api, opts: TelegramCheckOptions & { webhookUrl: string }): Promise<SetupFinding> {
  const info = await api.getWebhookInfo();
  if (info.url === "")
    return f.pass("webhook", `no webhook set yet: the bots role sets ${opts.webhookUrl} when it starts`);
  if (info.url !== opts.webhookUrl) {
    return f.fail(
      "webhook",
      `Telegram delivers to ${info.url}, not to TELEGRAM_WEBHOOK_URL`,
      "start the bots role (it calls setWebhook), and make sure no other instance uses this token",
    );
  }
  if (info.last_error_date) {
    const minutes = Math.max(0, Math.round((Date.now() / 1000 - info.last_error_date) / 60));
    return f.fail(
      "webhook",
      `Telegram's last delivery to ${info.url} failed ${minutes} min ago: ${info.last_error_message ?? "unknown error"} (${info.pending_update_count} updates waiting)`,
      `the URL must be public https on port 443, 80, 88 or 8443 with a valid certificate, forwarded to this machine's HTTP_PORT (${opts.httpPort}) at the same path`,
    );
  }
  return f.pass("webhook", `Telegram delivers to ${info.url} (${info.pending_update_count} updates waiting)`);
}

/** Runs the Telegram checks. */
export async function checkTelegram(opts: TelegramCheckOptions): Promise<SetupFinding[]> {
  // grammY waits up to 500 s by default; a check must say "unreachable" long before that.
  const api = new Api(opts.token, telegramClientOptions(opts.apiRoot, { timeoutSeconds: 10 }));
  const token = await checkToken(api, opts.apiRoot);
  if (token.finding.status === "fail") return [token.finding];
  const findings = [token.finding, statePrivacy(token.canReadAll)];
  if (opts.webhookUrl) {
    findings.push(
      await checkWebhook(api, { ...opts, webhookUrl: opts.webhookUrl }).catch((error: unknown) =>
        f.fail(
          "webhook",
          `getWebhookInfo failed: ${(error as Error).message}`,
          "run the doctor again; check TELEGRAM_API_ROOT",
        ),
      ),
    );
  }
  return findings;
}
