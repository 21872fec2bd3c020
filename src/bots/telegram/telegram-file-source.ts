/**
 * Downloads a Telegram file for the worker: `getFile` gives its path, the bytes come from the Bot
 * API's file URL (`<TELEGRAM_API_ROOT>/file/bot<token>/<path>`). That URL holds the bot token, so it
 * never appears in an error, a log line or a notice.
 */
import { GrammyError, type Api } from "grammy";
import type { AttachmentRef } from "../../contracts/inbound-message.js";
import { AttachmentError, tooLargeError, type FileSource } from "../../contracts/file-source.js";
import { readCapped } from "../../shared/read-capped.js";
import { withDeadline } from "../../shared/deadline.js";

/** What the file source needs: the REST client (for getFile), the token and root for the download URL. */
export interface TelegramFileSourceOptions {
  api: Api;
  token: string;
  apiRoot: string;
  timeoutMs?: number;
}

/** Creates the Telegram FileSource. */
export function createTelegramFileSource(opts: TelegramFileSourceOptions): FileSource {
  const root = opts.apiRoot.replace(/\/+$/, "");
  return {
    download(ref: AttachmentRef, { maxBytes, signal }) {
      // Held for the whole download, body included: AbortSignal.timeout combined with the job's
      // signal was collected, and a file served at 1 byte/s held an answer for minutes.
      return withDeadline(opts.timeoutMs ?? 30_000, (combined) => fetchFile(ref, maxBytes, combined, signal), signal);
    },
  };

  async function fetchFile(
    ref: AttachmentRef,
    maxBytes: number,
    combined: AbortSignal,
    signal: AbortSignal | undefined,
  ): Promise<Uint8Array> {
    let path: string | undefined;
    try {
      // grammY types its signal with the abort-controller polyfill; a native one works the same.
      const file = await opts.api.getFile(ref.ref, combined as unknown as Parameters<Api["getFile"]>[1]);
      if (file.file_size !== undefined && file.file_size > maxBytes)
        throw tooLargeError(ref.name, file.file_size, maxBytes);
      path = file.file_path;
    } catch (error) {
      if (error instanceof AttachmentError || signal?.aborted) throw error;
      // Bot API: "Bad Request: file is too big" past the 20 MB bots may download.
      if (error instanceof GrammyError && /too big/i.test(error.description))
        throw tooLargeError(ref.name, ref.size, Math.min(maxBytes, 20 * 1024 * 1024));
      throw new AttachmentError("unavailable", `${ref.name} could not be fetched from Telegram`);
    }
    if (!path) throw new AttachmentError("unavailable", `${ref.name} could not be fetched from Telegram`);
    let response: Response;
    try {
      response = await fetch(`${root}/file/bot${opts.token}/${path.split("/").map(encodeURIComponent).join("/")}`, {
        signal: combined,
        redirect: "error",
      });
    } catch {
      if (signal?.aborted) throw signal.reason;
      throw new AttachmentError("unavailable", `${ref.name} could not be downloaded from Telegram`);
    }
    if (response.status !== 200) {
      await response.body?.cancel();
      throw new AttachmentError(
        "unavailable",
        `${ref.name} could not be downloaded from Telegram (HTTP ${response.status})`,
      );
    }
    const declared = Number(response.headers.get("content-length") ?? NaN);
    if (Number.isFinite(declared) && declared > maxBytes) {
      await response.body?.cancel();
      throw tooLargeError(ref.name, declared, maxBytes);
    }
    try {
      // undici holds its own abort of the body only weakly: once collected, the deadline would not end the read.
      const body = await Promise.race([readCapped(response, maxBytes), rejectOnAbort(combined)]);
      if (body.truncated) throw tooLargeError(ref.name, undefined, maxBytes);
      return body.bytes;
    } catch (error) {
      if (error instanceof AttachmentError) throw error;
      if (signal?.aborted) throw signal.reason;
      throw new AttachmentError("unavailable", `${ref.name} could not be downloaded from Telegram`);
    }
  }
}

/** Rejects with the signal's reason once it aborts (never resolves). */
function rejectOnAbort(signal: AbortSignal): Promise<never> {
  return new Promise<never>((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener("abort", () => reject(signal.reason), { once: true });
  });
}
