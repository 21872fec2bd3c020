/**
 * The files of a Telegram message, and of the message it replies to, as references for the queue. Voice,
 * audio and round videos carry their duration, so an over-long note is refused before any download.
 */
import type { Message, PhotoSize } from "grammy/types";
import type { AttachmentRef } from "../../contracts/inbound-message.js";

/** True when the message carries a picture or a file the bot may read. */
export function hasTelegramFiles(message: Message | undefined): boolean {
  return (
    message !== undefined &&
    ((message.photo?.length ?? 0) > 0 ||
      message.document !== undefined ||
      message.voice !== undefined ||
      message.audio !== undefined ||
      message.video_note !== undefined)
  );
}

/** The largest photo size within the limit (sizes come smallest first); the smallest when none fits. */
export function pickPhotoSize(sizes: readonly PhotoSize[], maxBytes: number): PhotoSize | undefined {
  const byArea = [...sizes].sort((a, b) => a.width * a.height - b.width * b.height);
  const fitting = byArea.filter((s) => s.file_size === undefined || s.file_size <= maxBytes);
  return fitting.at(-1) ?? byArea[0];
}

function filesOf(message: Message, maxImageBytes: number, fromReply: boolean): AttachmentRef[] {
  const out: AttachmentRef[] = [];
  const extra = fromReply ? { fromReply: true } : {};
  const photo = message.photo?.length ? pickPhotoSize(message.photo, maxImageBytes) : undefined;
  if (photo) {
    out.push({
      ref: photo.file_id,
      name: `photo-${message.message_id}.jpg`,
      contentType: "image/jpeg",
      ...(photo.file_size !== undefined ? { size: photo.file_size } : {}),
      ...extra,
    });
  }
  const doc = message.document;
  if (doc) {
    out.push({
      ref: doc.file_id,
      name: (doc.file_name ?? `file-${message.message_id}`).slice(0, 200) || "file",
      contentType: (doc.mime_type ?? "application/octet-stream").slice(0, 200),
      ...(doc.file_size !== undefined ? { size: doc.file_size } : {}),
      ...extra,
    });
  }
  const id = message.message_id;
  const timed = [
    message.voice && { file: message.voice, name: `voice-${id}.ogg`, type: message.voice.mime_type ?? "audio/ogg" },
    message.audio && {
      file: message.audio,
      name: message.audio.file_name ?? `audio-${id}.mp3`,
      type: message.audio.mime_type ?? "audio/mpeg",
    },
    message.video_note && { file: message.video_note, name: `video-note-${id}.mp4`, type: "video/mp4" },
  ];
  for (const media of timed) {
    if (!media) continue;
    out.push({
      ref: media.file.file_id,
      name: media.name.slice(0, 200) || "audio",
      contentType: media.type.slice(0, 200),
      durationSeconds: media.file.duration,
      ...(media.file.file_size !== undefined ? { size: media.file.file_size } : {}),
      ...extra,
    });
  }
  return out;
}

/** The message's own files, then those of the message it replies to. */
export function telegramAttachments(
  message: Message,
  reply: Message | undefined,
  maxImageBytes: number,
): AttachmentRef[] {
  return [...filesOf(message, maxImageBytes, false), ...(reply ? filesOf(reply, maxImageBytes, true) : [])];
}
