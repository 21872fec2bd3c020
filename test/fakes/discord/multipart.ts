/**
 * A message with files, as Discord reads it: multipart/form-data with the JSON body in `payload_json`
 * and each file in a part named `files[n]` (with a filename); `attachments[]` in the JSON names each
 * file by `id` = n and carries its metadata (filename, description, a voice message's `duration_secs`
 * and `waveform`). Anything else is a 400 Invalid Form Body, as on Discord; the whole request over the
 * upload limit is a 413 before any of it is read.
 */
import { apiError, formError, type HttpAnswer } from "./http-answer.js";

/** One file part of a request. */
export interface UploadedFile {
  /** `files[n]`: n. */
  index: number;
  filename: string;
  contentType: string;
  bytes: Buffer;
}

/** A multipart request read: its JSON body and its files. */
export interface MultipartMessage {
  body: Record<string, unknown>;
  files: UploadedFile[];
}

/** Discord's default upload limit for a bot's message (10 MiB, all files together). */
export const DEFAULT_UPLOAD_LIMIT_BYTES = 10 * 1024 * 1024;

const FILE_FIELD = /^files\[(\d+)\]$/;

/** Reads a multipart request, or the error Discord would answer. */
export async function readMultipart(
  raw: Buffer,
  contentType: string,
  limitBytes: number,
): Promise<MultipartMessage | HttpAnswer> {
  if (raw.length > limitBytes) return apiError(413, 40005, "Request entity too large");
  let form: FormData;
  try {
    form = await new Response(new Uint8Array(raw), { headers: { "content-type": contentType } }).formData();
  } catch {
    return apiError(400, 50035, "Invalid Form Body", {
      _errors: [{ code: "MULTIPART_INVALID", message: "Could not parse the multipart body" }],
    });
  }
  let body: Record<string, unknown> = {};
  const files: UploadedFile[] = [];
  for (const [name, value] of form.entries()) {
    if (name === "payload_json") {
      if (typeof value !== "string") return formError("payload_json", "BASE_TYPE_STRING", "Must be a string.");
      try {
        const parsed = JSON.parse(value) as unknown;
        if (!parsed || typeof parsed !== "object" || Array.isArray(parsed))
          return formError("payload_json", "DICT_TYPE_CONVERT", "Only dictionaries may be used in a DictType");
        body = parsed as Record<string, unknown>;
      } catch {
        return apiError(400, 50109, "The request body contains invalid JSON.");
      }
      continue;
    }
    const file = FILE_FIELD.exec(name);
    if (!file || typeof value === "string")
      return formError(name, "UNKNOWN_FIELD", "Unknown field: use payload_json and files[n].");
    files.push({
      index: Number(file[1]),
      filename: value.name,
      contentType: value.type,
      bytes: Buffer.from(await value.arrayBuffer()),
    });
  }
  // Each attachment named in the JSON must be one of the uploaded parts.
  const listed = Array.isArray(body.attachments) ? (body.attachments as Record<string, unknown>[]) : [];
  for (const [i, a] of listed.entries()) {
    const id = Number(a?.id);
    if (!files.some((f) => f.index === id))
      return formError(`attachments.${i}.id`, "ATTACHMENT_NOT_FOUND", `Attachment with id ${String(a?.id)} not found`);
  }
  return { body, files };
}
