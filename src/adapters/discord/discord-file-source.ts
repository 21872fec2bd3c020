/**
 * Downloads a Discord attachment for the worker, from Discord's CDN hosts only (and the host of
 * DISCORD_API_BASE, which is where a test's fake serves its attachments), through the project's
 * safe fetch: a URL in the queue payload can never make the worker reach anything else.
 */
import type { AttachmentRef } from "../../contracts/inbound-message.js";
import { AttachmentError, tooLargeError, type FileSource } from "../../attachments/file-source.js";
import { createSafeFetch, SafeFetchError, type SafeFetchOptions } from "../../tools/safe-fetch.js";

/** Discord's attachment hosts. */
export const DISCORD_CDN_HOSTS = ["cdn.discordapp.com", "media.discordapp.net"] as const;

/** Where attachments may come from and how they are fetched. */
export interface DiscordFileSourceOptions {
  /** DISCORD_API_BASE: its host is allowed too (the fake's, in tests; discord.com otherwise). */
  apiBase: string;
  timeoutMs?: number;
  /** Passed to the safe fetch (tests inject a resolver). */
  fetchOptions?: Pick<SafeFetchOptions, "lookup" | "connect">;
}

/** Creates the Discord FileSource. */
export function createDiscordFileSource(opts: DiscordFileSourceOptions): FileSource {
  const api = new URL(opts.apiBase);
  const apiPort = api.port || (api.protocol === "https:" ? "443" : "80");
  const hosts = new Set<string>([...DISCORD_CDN_HOSTS, api.host.toLowerCase()]);
  // The API's own host may be a loopback fake: the safe fetch lets exactly that host:port through.
  const allowHosts = [`${api.hostname.toLowerCase()}:${apiPort}`];

  return {
    async download(ref: AttachmentRef, { maxBytes, signal }) {
      let url: URL;
      try {
        url = new URL(ref.ref);
      } catch {
        throw new AttachmentError("refused", `${ref.name} has no valid address`);
      }
      const fromApiHost = url.host.toLowerCase() === api.host.toLowerCase() && url.protocol === api.protocol;
      if (!hosts.has(url.host.toLowerCase()) || (!fromApiHost && url.protocol !== "https:")) {
        throw new AttachmentError("refused", `${ref.name} is not on Discord's CDN`);
      }
      const get = createSafeFetch({
        allowHosts,
        maxBytes: maxBytes + 1,
        maxRedirects: 0,
        timeoutMs: opts.timeoutMs ?? 30_000,
        ...opts.fetchOptions,
      });
      try {
        const response = await get(url.toString(), { ...(signal ? { signal } : {}), accept: "*/*" });
        if (response.status !== 200) throw new AttachmentError("unavailable", `${ref.name} could not be downloaded from Discord (HTTP ${response.status})`);
        if (response.truncated || response.body.length > maxBytes) throw tooLargeError(ref.name, ref.size, maxBytes);
        return new Uint8Array(response.body);
      } catch (error) {
        if (error instanceof AttachmentError) throw error;
        if (signal?.aborted) throw signal.reason;
        const why = error instanceof SafeFetchError && error.code === "timeout" ? " (timed out)" : "";
        throw new AttachmentError("unavailable", `${ref.name} could not be downloaded from Discord${why}`);
      }
    },
  };
}
