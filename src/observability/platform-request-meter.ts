/**
 * Counts the reply engine's requests to the platforms where HTTP is spoken, so
 * chatbot_platform_requests_total says what really reached Telegram and Discord:
 * a grammY transformer for the worker's Telegram `Api`, a fetch wrapper for the
 * Discord REST client. A 429 is counted as `rate_limited` when the platform
 * answered it, not when our own pacing held a request back (that never left).
 */
import type { Transformer } from "grammy";
import type { Metrics } from "./metrics.js";

/** What a request did, as chatbot_platform_requests_total's `kind` label says it. */
export type PlatformRequestKind = "send" | "edit" | "draft" | "typing" | "other";

/** How a request ended: answered fine, refused with 429, any other refusal or network failure, or cancelled by us. */
export type PlatformRequestOutcome = "ok" | "rate_limited" | "error" | "aborted";

/** Cancelled by us (/stop, shutdown); a request that timed out is an error of the platform's. */
function failureOutcome(signal: AbortSignal | null | undefined): PlatformRequestOutcome {
  return signal?.aborted && (signal.reason as Error | undefined)?.name !== "TimeoutError" ? "aborted" : "error";
}

const TELEGRAM_KINDS: Record<string, PlatformRequestKind> = {
  sendMessage: "send",
  editMessageText: "edit",
  sendMessageDraft: "draft",
  sendChatAction: "typing",
};

/** A grammY transformer counting every Bot API call (install with `api.config.use(...)`). */
export function telegramRequestMeter(metrics: Pick<Metrics, "platformRequests">): Transformer {
  return async (prev, method, payload, signal) => {
    const kind = TELEGRAM_KINDS[method] ?? "other";
    try {
      const result = await prev(method, payload, signal);
      const outcome: PlatformRequestOutcome = result.ok ? "ok" : result.error_code === 429 ? "rate_limited" : "error";
      metrics.platformRequests.inc({ platform: "telegram", kind, outcome });
      return result;
    } catch (error) {
      metrics.platformRequests.inc({ platform: "telegram", kind, outcome: failureOutcome(signal as unknown as AbortSignal | undefined) });
      throw error;
    }
  };
}

/** The kind of a Discord REST call, from its method and path (…/channels/{id}/messages[/{id}], …/typing). */
export function discordRequestKind(method: string, url: string): PlatformRequestKind {
  const path = new URL(url).pathname;
  if (method === "POST" && /\/channels\/\d+\/messages$/.test(path)) return "send";
  if (method === "PATCH" && /\/channels\/\d+\/messages\/\d+$/.test(path)) return "edit";
  if (method === "POST" && /\/channels\/\d+\/typing$/.test(path)) return "typing";
  return "other";
}

/** Wraps `fetch` for the Discord REST client so every answer (or failure) is counted. */
export function meteredDiscordFetch(metrics: Pick<Metrics, "platformRequests">, fetchImpl: typeof fetch = fetch): typeof fetch {
  return async (input, init) => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    const kind = discordRequestKind((init?.method ?? (input instanceof Request ? input.method : "GET")).toUpperCase(), url);
    try {
      const res = await fetchImpl(input, init);
      const outcome: PlatformRequestOutcome = res.ok ? "ok" : res.status === 429 ? "rate_limited" : "error";
      metrics.platformRequests.inc({ platform: "discord", kind, outcome });
      return res;
    } catch (error) {
      metrics.platformRequests.inc({ platform: "discord", kind, outcome: failureOutcome(init?.signal) });
      throw error;
    }
  };
}
