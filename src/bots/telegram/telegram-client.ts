/**
 * grammY's client options: undici's `request()` (a reply makes about thirty small calls; node-fetch costs
 * more CPU each) and no redirects, since the token is in every request's path and must not reach another host.
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
