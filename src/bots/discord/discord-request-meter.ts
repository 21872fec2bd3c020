/** Counts every Discord REST call of the worker in chatbot_platform_requests_total. */
import { DefaultRestOptions } from "@discordjs/rest";
import {
  answeredOutcome,
  failureOutcome,
  type PlatformRequestCounter,
  type PlatformRequestKind,
} from "../../observability/platform-request-meter.js";
import type { MakeRequest } from "./discord-rest-client.js";

/** The kind of a Discord REST call, from its method and path (…/channels/{id}/messages[/{id}], …/typing). */
export function discordRequestKind(method: string, url: string): PlatformRequestKind {
  const path = new URL(url).pathname;
  if (method === "POST" && /\/channels\/\d+\/messages$/.test(path)) return "send";
  if (method === "PATCH" && /\/channels\/\d+\/messages\/\d+$/.test(path)) return "edit";
  if (method === "POST" && /\/channels\/\d+\/typing$/.test(path)) return "typing";
  return "other";
}

/** Wraps REST's HTTP call for the Discord REST client so every answer (or failure) is counted. */
export function meteredDiscordRequests(
  metrics: PlatformRequestCounter,
  makeRequest: MakeRequest = DefaultRestOptions.makeRequest,
): MakeRequest {
  return async (url, init) => {
    const kind = discordRequestKind((init.method ?? "GET").toUpperCase(), url);
    try {
      const res = await makeRequest(url, init);
      metrics.platformRequests.inc({ platform: "discord", kind, outcome: answeredOutcome(res.ok, res.status) });
      return res;
    } catch (error) {
      metrics.platformRequests.inc({
        platform: "discord",
        kind,
        outcome: failureOutcome(init.signal as AbortSignal | null | undefined),
      });
      throw error;
    }
  };
}
