/**
 * grammY's client options for the deployment's Bot API root. The bot's token travels in the path of every
 * request, so the client never follows a redirect (a misconfigured proxy or a hijacked root would otherwise
 * receive the token at another host): node-fetch under grammY refuses it and the call fails as unreachable.
 */
import type { ApiClientOptions } from "grammy";

/** `options` (a timeout, say) with the API root and the redirect refusal that every client of the bot must have. */
export function telegramClientOptions(apiRoot: string, options: ApiClientOptions = {}): ApiClientOptions {
  return { ...options, apiRoot, baseFetchConfig: { ...options.baseFetchConfig, redirect: "error" } };
}
