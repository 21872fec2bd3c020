/** Counts every Discord REST call of the worker in chatbot_platform_requests_total. */
import {
  answeredOutcome,
  failureOutcome,
  type PlatformRequestCounter,
  type PlatformRequestKind,
} from "../../observability/platform-request-meter.js";

/** The kind of a Discord REST call, from its method and path (…/channels/{id}/messages[/{id}], …/typing). */
export function discordRequestKind(method: string, url: string): PlatformRequestKind {
  const path = new URL(url).pathname;
  if (method === "POST" && /\/channels\/\d+\/messages$/.test(path)) return "send";
  if (method === "PATCH" && /\/channels\/\d+\/messages\/\d+$/.test(path)) return "edit";
  if (method === "POST" && /\/channels\/\d+\/typing$/.test(path)) return "typing";
  return "other";
}

/** Wraps `fetch` for the Discord REST client so every answer (or failure) is counted. */
export function meteredDiscordFetch(metrics: PlatformRequestCounter, fetchImpl: typeof fetch = fetch): typeof fetch {
  return async (input, init) => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    const kind = discordRequestKind(
      (init?.method ?? (input instanceof Request ? input.method : "GET")).toUpperCase(),
      url,
    );
    try {
      const res = await fetchImpl(input, init);
      metrics.platformRequests.inc({ platform: "discord", kind, outcome: answeredOutcome(res.ok, res.status) });
      return res;
    } catch (error) {
      metrics.platformRequests.inc({ platform: "discord", kind, outcome: failureOutcome(init?.signal) });
      throw error;
    }
  };
}
