/**
 * Downloads a Discord attachment for the worker, from Discord's CDN hosts (or DISCORD_API_BASE's, where a test's
 * fake serves them) only, through a guarded download: a URL in the queue payload can never reach anything else.
 */
import type { AttachmentRef } from "../../contracts/inbound-message.js";
import { AttachmentError, tooLargeError, type FileSource } from "../../contracts/file-source.js";

/** Discord's attachment hosts. */
const DISCORD_CDN_HOSTS = ["cdn.discordapp.com", "media.discordapp.net"];

/**
 * A guarded GET: `allowHostPort` may be reached even if private (the configured API's own host),
 * every other address is checked; no redirects; the body stops past `maxBytes` (`truncated`).
 * Rejects with a short, safe message when refused or unreachable.
 */
export type GuardedDownload = (
  url: string,
  opts: { maxBytes: number; allowHostPort: string; signal?: AbortSignal },
) => Promise<{ status: number; body: Uint8Array; truncated: boolean }>;

/** Creates the Discord FileSource; `apiBase` (DISCORD_API_BASE) is an allowed host too. */
export function createDiscordFileSource(opts: { apiBase: string; download: GuardedDownload }): FileSource {
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
