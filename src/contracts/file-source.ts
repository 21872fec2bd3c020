/** The port through which the worker downloads a chat's picture or file; each platform's adapter implements it. */
import type { AttachmentRef } from "./inbound-message.js";

/** Why a file could not be had; `message` is short and safe to show in the chat. */
export type AttachmentErrorCode = "too-large" | "unavailable" | "refused";

/** A download that failed or was refused. */
export class AttachmentError extends Error {
  override readonly name = "AttachmentError";
  constructor(
    readonly code: AttachmentErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** Downloads one attachment of one platform. */
export interface FileSource {
  /** The file's bytes; rejects with AttachmentError past `maxBytes` or when the platform will not give it. */
  download(ref: AttachmentRef, opts: { maxBytes: number; signal?: AbortSignal }): Promise<Uint8Array>;
}

/** "12.3 MB" / "850 KB": sizes as people read them. */
export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1).replace(/\.0$/, "")} MB`;
  return `${Math.max(1, Math.round(bytes / 1024))} KB`;
}

/** The refusal for a file over the limit (the same words wherever the size is found out). */
export function tooLargeError(name: string, size: number | undefined, maxBytes: number): AttachmentError {
  const got = size !== undefined ? `${formatBytes(size)}; ` : "";
  return new AttachmentError("too-large", `${name} is too large (${got}the limit is ${formatBytes(maxBytes)})`);
}
