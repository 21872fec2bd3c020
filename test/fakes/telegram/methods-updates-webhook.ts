/**
 * getUpdates, setWebhook, deleteWebhook and getWebhookInfo: the long poll with its offset
 * confirmations, limit, timeout and allowed_updates, the 409s when two readers compete (a second
 * poll, a poll while a webhook is set, setWebhook ending a poll), and the webhook's settings.
 */
import type { ServerResponse } from "node:http";
import type { MethodTable } from "./method-dispatch.js";
import { ApiFailure, bad, CLIENT_GONE } from "./method-outcomes.js";
import { bool, int, jsonArg, str } from "./method-params.js";
import type { Poller, TelegramState } from "./state.js";
import type { WebhookDelivery } from "./webhook-delivery.js";

/** Takes allowed_updates when the call carries it (it stays until the next call that does). */
function takeAllowedUpdates(state: TelegramState, p: Record<string, unknown>): void {
  if (p.allowed_updates === undefined) return;
  const allowed = jsonArg(p.allowed_updates, "allowed_updates");
  if (Array.isArray(allowed)) state.allowedUpdates = allowed.map(String);
}

/** Waits until updates arrive, the timeout passes, another reader takes over or the client hangs up. */
function longPoll(state: TelegramState, limit: number, timeout: number, res?: ServerResponse): Promise<unknown> {
  return new Promise((resolve) => {
    let done = false;
    const poller: Poller = {
      limit,
      finish: (outcome) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        if (state.poller === poller) state.poller = undefined;
        state.changed();
        resolve(outcome instanceof ApiFailure ? outcome : outcome.map((u) => u.update));
      },
    };
    const timer = setTimeout(() => poller.finish([]), timeout * 1000);
    state.poller = poller;
    state.changed();
    res?.once("close", () => {
      if (!done) {
        // The client aborted (bot.stop, runner.stop): the request is gone, nothing is answered.
        done = true;
        clearTimeout(timer);
        if (state.poller === poller) state.poller = undefined;
        state.changed();
        resolve(CLIENT_GONE);
      }
    });
  });
}

/** The getUpdates handler. */
async function getUpdates(state: TelegramState, p: Record<string, unknown>, res?: ServerResponse): Promise<unknown> {
  if (state.webhook) {
    return new ApiFailure(
      409,
      "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first",
    );
  }
  const offset = int(p.offset) ?? 0;
  const limit = Math.min(100, Math.max(1, int(p.limit) ?? 100));
  const timeout = Math.min(state.options.maxLongPollSeconds ?? 50, Math.max(0, int(p.timeout) ?? 0));
  takeAllowedUpdates(state, p);
  // Calling with an offset confirms every update before it: they are forgotten for good.
  if (offset > 0) state.queue = state.queue.filter((u) => u.update_id >= offset);
  else if (offset < 0) state.queue = state.queue.slice(offset);
  state.changed();
  const ready = state.queue.slice(0, limit);
  if (ready.length > 0 || timeout === 0) return ready.map((u) => u.update);

  // A second long poll ends the first with 409, like two bot instances fighting over one token.
  state.poller?.finish(
    new ApiFailure(
      409,
      "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running",
    ),
  );
  return longPoll(state, limit, timeout, res);
}

/** The handlers reading and routing updates. */
export function updateWebhookMethods(state: TelegramState, delivery: WebhookDelivery): MethodTable {
  const deleteWebhook = (p: Record<string, unknown>): unknown => {
    if (bool(p.drop_pending_updates)) state.queue = [];
    state.webhook = undefined;
    return true;
  };
  return {
    getupdates: (p, res) => getUpdates(state, p, res),
    setwebhook(p) {
      const url = str(p.url) ?? "";
      if (url === "") return deleteWebhook(p);
      if (!/^https?:\/\//.test(url)) return bad("bad webhook: An HTTPS URL must be provided for webhook");
      const secretToken = str(p.secret_token);
      if (secretToken !== undefined && !/^[A-Za-z0-9_-]{1,256}$/.test(secretToken))
        return bad("secret token contains unallowed characters");
      takeAllowedUpdates(state, p);
      if (bool(p.drop_pending_updates)) state.queue = [];
      state.poller?.finish(new ApiFailure(409, "Conflict: terminated by setWebhook request"));
      state.webhook = { url, ...(secretToken ? { secretToken } : {}) };
      delivery.kick();
      return true;
    },
    deletewebhook: deleteWebhook,
    getwebhookinfo: () => ({
      url: state.webhook?.url ?? "",
      has_custom_certificate: false,
      pending_update_count: state.queue.length,
      ...(state.webhookLastError
        ? { last_error_date: state.webhookLastError.date, last_error_message: state.webhookLastError.message }
        : {}),
    }),
  };
}
