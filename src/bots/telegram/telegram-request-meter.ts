/** Counts every Bot API call of the worker's Telegram `Api` in chatbot_platform_requests_total. */
import type { Transformer } from "grammy";
import {
  answeredOutcome,
  failureOutcome,
  type PlatformRequestCounter,
  type PlatformRequestKind,
  type PlatformRequestOutcome,
} from "../../observability/platform-request-meter.js";

const TELEGRAM_KINDS: Record<string, PlatformRequestKind> = {
  sendMessage: "send",
  editMessageText: "edit",
  sendMessageDraft: "draft",
  sendChatAction: "typing",
};

/** A grammY transformer counting every Bot API call (install with `api.config.use(...)`). */
export function telegramRequestMeter(metrics: PlatformRequestCounter): Transformer {
  return async (prev, method, payload, signal) => {
    let outcome: PlatformRequestOutcome | undefined;
    try {
      const result = await prev(method, payload, signal);
      outcome = answeredOutcome(result.ok, result.ok ? undefined : result.error_code);
      return result;
    } finally {
      metrics.platformRequests.inc({
        platform: "telegram",
        kind: TELEGRAM_KINDS[method] ?? "other",
        outcome: outcome ?? failureOutcome(signal as unknown as AbortSignal | undefined),
      });
    }
  };
}
