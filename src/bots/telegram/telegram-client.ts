/**
 * grammY's client options for the deployment's Bot API root, over undici's `request()`
 * (shared/undici-fetch.ts: a reply makes about thirty small calls, and node-fetch's streams cost more
 * CPU per call). The bot's token travels in the path of every request, so the client never follows a
 * redirect (a misconfigured proxy or a hijacked root would otherwise receive the token at another host):
 * the call fails as unreachable.
 */
import type { ApiClientOptions } from "grammy";
import { undiciFetch } from "../../shared/undici-fetch.js";

/** `options` (a timeout, say) with the API root and the redirect refusal that every client of the bot must have. */
export function telegramClientOptions(apiRoot: string, options: ApiClientOptions = {}): ApiClientOptions {
  return {
    fetch: undiciFetch,
    ...options,
    apiRoot,
    baseFetchConfig: { ...options.baseFetchConfig, redirect: "error" },
  };
}
