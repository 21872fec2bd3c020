/** The queue payload: the only thing adapters and the worker share, validated before enqueueing. */
import { z } from "zod";

export const platformSchema = z.enum(["telegram", "discord", "terminal", "web"]);
export type Platform = z.infer<typeof platformSchema>;

/** A picture or file by reference (bytes never travel through the queue): Telegram file_id or Discord URL. */
export const attachmentRefSchema = z.object({
  ref: z.string().min(1).max(2000),
  name: z.string().min(1).max(200),
  contentType: z.string().max(200),
  size: z.number().int().nonnegative().optional(),
  /** How long a voice note, audio file or video note plays, as the platform said (seconds). */
  durationSeconds: z.number().nonnegative().optional(),
  /** Taken from the message this one replies to ("what is in this picture?" under someone's photo). */
  fromReply: z.boolean().optional(),
});

export type AttachmentRef = z.infer<typeof attachmentRefSchema>;

export const inboundMessageSchema = z
  .object({
    platform: platformSchema,
    /** History key: `tg:<chat_id>[:<thread_id>]`, `dc:<channel_id>`, `term:<session>`, `web:<user>`. */
    conversationKey: z.string().min(1).max(200),
    chatId: z.string().min(1).max(100),
    /** Telegram forum topic (message_thread_id); Discord threads are channels of their own. */
    threadId: z.string().max(100).optional(),
    messageId: z.string().min(1).max(100),
    chatType: z.enum(["private", "group", "channel"]),
    /** Discord guild id, for access control and logs. */
    guildId: z.string().max(100).optional(),
    author: z.object({
      id: z.string().min(1).max(100),
      displayName: z.string().min(1).max(200),
      /** The platform handle (Telegram @username, without the @), when the user has one. */
      username: z.string().max(64).optional(),
    }),
    /** The question; may be empty only when pictures or files carry it. */
    text: z.string(),
    /** The message this one replies to, if any (its text gives the model context). */
    replyTo: z
      .object({
        messageId: z.string().max(100),
        authorName: z.string().max(200).optional(),
        text: z.string().max(4000).optional(),
      })
      .optional(),
    receivedAt: z.number().int().nonnegative(),
    /** The adapter showed typing on receipt; the worker shows it again only if it faded before the job started. */
    typingOnReceipt: z.boolean().optional(),
    attachments: z.array(attachmentRefSchema).max(20).optional(),
  })
  .refine((m) => m.text.trim() !== "" || (m.attachments?.length ?? 0) > 0, {
    message: "a message needs text or an attachment",
    path: ["text"],
  });

export type InboundMessage = z.infer<typeof inboundMessageSchema>;

/** BullMQ job id for a message: platform + chat + message (BullMQ forbids ':' in custom ids). */
export function jobIdFor(m: Pick<InboundMessage, "platform" | "chatId" | "messageId">): string {
  return [m.platform, m.chatId, m.messageId].map((part) => part.replace(/[^A-Za-z0-9_.-]/g, "_")).join("-");
}
