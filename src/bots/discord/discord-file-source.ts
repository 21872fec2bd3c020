/**
 * Downloads a Discord attachment for the worker, from Discord's CDN hosts only (and the host of
 * DISCORD_API_BASE, which is where a test's fake serves its attachments), through an injected
 * guarded download (the composition root passes the project's safe fetch, which refuses private
 * addresses after DNS and on redirects): a URL in the queue payload can never make the worker
 * reach anything else.
 */
import type { AttachmentRef } from "../../contracts/inbound-message.js";
import { AttachmentError, tooLargeError, type FileSource } from "../../contracts/file-source.js";

/** Discord's attachment hosts. */
export const DISCORD_CDN_HOSTS = ["cdn.discordapp.com", "media.discordapp.net"] as const;

/**
 * A guarded GET: `allowHostPort` may be reached even if private (the configured API's own host),
 * every other address is checked; no redirects; the body stops past `maxBytes` (`truncated`).
 * Rejects with a short, safe message when refused or unreachable.
 */
export type GuardedDownload = (
  url: string,
  opts: { maxBytes: number; allowHostPort: string; signal?: AbortSignal },
) => Promise<{ status: number; body: Uint8Array; truncated: boolean }>;

/** Where attachments may come from and how they are fetched. */
export interface DiscordFileSourceOptions {
  /** DISCORD_API_BASE: its host is allowed too (the fake's, in tests; discord.com otherwise). */
  apiBase: string;
  download: GuardedDownload;
}

/** Creates the Discord FileSource. */
export function createDiscordFileSource(opts: DiscordFileSourceOptions): FileSource {
  const api = new URL(opts.apiBase);
  const apiPort = api.port || (api.protocol === "https:" ? "443" : "80");
  const hosts = new Set<string>([...DISCORD_CDN_HOSTS, api.host.toLowerCase()]);
  const allowHostPort = `${api.hostname.toLowerCase()}:${apiPort}`;

  return {
    async download(ref: AttachmentRef, { maxBytes, signal }: { maxBytes: number; signal?: AbortSignal }) {
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
      let response: Awaited<ReturnType<GuardedDownload>>;
      try {
        response = await opts.download(url.toString(), { maxBytes, allowHostPort, ...(signal ? { signal } : {}) });
      } catch {
        if (signal?.aborted) throw signal.reason;
        throw new AttachmentError("unavailable", `${ref.name} could not be downloaded from Discord`);
      }
      if (response.status !== 200)
        throw new AttachmentError(
          "unavailable",
          `${ref.name} could not be downloaded from Discord (HTTP ${response.status})`,
        );
      if (response.truncated || response.body.length > maxBytes) throw tooLargeError(ref.name, ref.size, maxBytes);
      return response.body;
    },
  };
}
