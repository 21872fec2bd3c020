/** Counts every Bot API call of the worker's Telegram `Api` in chatbot_platform_requests_total. */
import type { Transformer } from "grammy";
import {
  answeredOutcome,
  failureOutcome,
  type PlatformRequestCounter,
  type PlatformRequestKind,
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
    const kind = TELEGRAM_KINDS[method] ?? "other";
    try {
      const result = await prev(method, payload, signal);
      metrics.platformRequests.inc({
        platform: "telegram",
        kind,
        outcome: answeredOutcome(result.ok, result.ok ? undefined : result.error_code),
      });
      return result;
    } catch (error) {
      metrics.platformRequests.inc({
        platform: "telegram",
        kind,
        outcome: failureOutcome(signal as unknown as AbortSignal | undefined),
      });
      throw error;
    }
  };
}
