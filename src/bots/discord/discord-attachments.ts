/**
 * The files of a Discord message (and of the one it replies to), as references the worker downloads. A voice
 * message's duration comes along, so an over-long one is refused before any download.
 */
import type { Message } from "discord.js";
import type { AttachmentRef } from "../../contracts/inbound-message.js";

function filesOf(message: Message, fromReply: boolean): AttachmentRef[] {
  return [...message.attachments.values()].map((a) => ({
    ref: a.url,
    name: (a.name || `attachment-${a.id}`).slice(0, 200),
    contentType: (a.contentType ?? "").slice(0, 200),
    size: a.size,
    ...(a.duration != null ? { durationSeconds: a.duration } : {}),
    ...(fromReply ? { fromReply: true } : {}),
  }));
}

/** The message's own attachments, then those of the replied-to message. */
export function discordAttachments(message: Message, referenced: Message | undefined): AttachmentRef[] {
  return [...filesOf(message, false), ...(referenced ? filesOf(referenced, true) : [])].slice(0, 20);
}
