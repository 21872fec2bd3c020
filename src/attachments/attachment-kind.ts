/**
 * What a chat attachment is for the bot: picture, text file, PDF, speech, or unreadable. Chat clients' content
 * types are often generic (`application/octet-stream`) or wrong for source code, so the file name decides too.
 */
import type { AttachmentRef } from "../contracts/inbound-message.js";

type AttachmentKind = "image" | "text" | "pdf" | "audio" | "other";

const IMAGE_EXTENSIONS = new Set(["jpg", "jpeg", "png", "webp", "gif", "avif", "heic", "heif", "tif", "tiff", "bmp"]);
const AUDIO_EXTENSIONS = new Set(["ogg", "oga", "opus", "mp3", "m4a", "wav", "flac", "weba"]);
const TEXT_TYPES = new Set([
  ..."json xml x-yaml yaml toml javascript x-javascript typescript x-sh sql x-python"
    .split(" ")
    .map((t) => `application/${t}`),
  "image/svg+xml",
]);
const TEXT_EXTENSIONS = new Set(
  (
    "txt md markdown json jsonl csv tsv xml yaml yml toml ini cfg conf log html htm css scss svg sql sh bash zsh " +
    "ts tsx js jsx mjs cjs py rb go rs java kt kts c h cc cpp hpp cs swift php lua pl r scala dart vue env gitignore dockerfile makefile"
  ).split(" "),
);

function extensionOf(name: string): string {
  const lower = name.toLowerCase();
  const dot = lower.lastIndexOf(".");
  return dot === -1 ? lower : lower.slice(dot + 1);
}

/** Sorts an attachment by its content type, then its file name. */
export function attachmentKind(ref: Pick<AttachmentRef, "name" | "contentType" | "durationSeconds">): AttachmentKind {
  const type = ref.contentType.toLowerCase().split(";")[0]?.trim() ?? "";
  const ext = extensionOf(ref.name);
  const untyped = type === "" || type === "application/octet-stream";
  if (type === "application/pdf" || ext === "pdf") return "pdf";
  // A platform that gives a duration (voice note, audio, video note) means something to listen to.
  if (type.startsWith("audio/") || ref.durationSeconds !== undefined) return "audio";
  if (untyped && AUDIO_EXTENSIONS.has(ext)) return "audio";
  // SVG is XML, so it is read as text rather than rendered.
  if ((type.startsWith("image/") && type !== "image/svg+xml") || (untyped && IMAGE_EXTENSIONS.has(ext))) return "image";
  if (type.startsWith("text/") || TEXT_TYPES.has(type) || type.endsWith("+json") || TEXT_EXTENSIONS.has(ext))
    return "text";
  return "other";
}
