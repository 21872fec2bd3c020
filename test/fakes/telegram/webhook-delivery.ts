/**
 * Delivering queued updates to the webhook one at a time, like Telegram: POST the update as
 * JSON with the secret token header, forget it on a 2xx (running the method call a webhook may
 * answer with), otherwise keep it, remember the error as getWebhookInfo reports it, and retry
 * after a pause.
 */
import type { WebhookAttempt } from "../telegram-server.js";
import type { Dispatch } from "./method-dispatch.js";
import { ApiFailure } from "./method-outcomes.js";
import type { TelegramState } from "./state.js";

/** Reason phrases Telegram quotes in last_error_message. */
const STATUS_TEXT: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  500: "Internal Server Error",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
};

/** The webhook's delivery loop. */
export interface WebhookDelivery {
  /** Starts delivering if a webhook is set, updates wait and no delivery is running. */
  kick(): void;
}

/** Telegram's own wording for a failed delivery: "Connection refused", "Wrong response from the webhook: 502 Bad Gateway", … */
function deliveryError(attempt: WebhookAttempt, causeCode: string | undefined): string {
  if (attempt.status !== undefined)
    return `Wrong response from the webhook: ${attempt.status} ${STATUS_TEXT[attempt.status] ?? ""}`.trim();
  return causeCode === "ECONNREFUSED" ? "Connection refused" : `Connection error: ${attempt.error ?? "unknown"}`;
}

/** The delivery loop over the state's queue; `dispatch` runs a method a webhook answers with. */
export function createWebhookDelivery(state: TelegramState, dispatch: Dispatch): WebhookDelivery {
  /** Runs the method call a webhook may answer with in its response body, recording it like a request. */
  const runAnswerCall = async (body: string): Promise<void> => {
    const call = JSON.parse(body) as Record<string, unknown>;
    if (typeof call.method !== "string") return;
    const { method, ...params } = call;
    const outcome = await dispatch(method as string, params);
    if (outcome instanceof ApiFailure) state.record(method as string, params, outcome.code, false, outcome.description);
    else state.record(method as string, params, 200, true, undefined, outcome);
  };

  /** Delivers the oldest update; a non-2xx answer or a network error is retried after a pause, like Telegram does. */
  const deliverNext = async (): Promise<void> => {
    const hook = state.webhook;
    const next = state.queue[0];
    if (!hook || !next || state.closed) {
      state.delivering = false;
      return;
    }
    const attempt: WebhookAttempt = { at: state.now(), updateId: next.update_id };
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
      if (delivered && body.trim().startsWith("{")) await runAnswerCall(body);
    } catch (err) {
      attempt.error = (err as Error).message;
      causeCode = ((err as Error).cause as { code?: string } | undefined)?.code;
    }
    if (!delivered)
      state.webhookLastError = { date: Math.floor(state.now() / 1000), message: deliveryError(attempt, causeCode) };
    state.webhookAttempts.push(attempt);
    if (delivered) state.queue = state.queue.filter((u) => u.update_id !== next.update_id);
    state.changed();
    if (state.closed) return;
    state.deliveryTimer = setTimeout(
      () => void deliverNext(),
      delivered ? 0 : (state.options.webhookRetryDelayMs ?? 100),
    );
  };

  return {
    kick() {
      if (!state.webhook || state.delivering || state.closed || state.queue.length === 0) return;
      state.delivering = true;
      void deliverNext();
    },
  };
}
