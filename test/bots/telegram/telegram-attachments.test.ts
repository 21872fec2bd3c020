/** Which Telegram files a message hands to the queue: the largest photo size within MAX_IMAGE_BYTES, documents, the replied-to message's files. */
import { describe, expect, it } from "vitest";
import type { Message } from "grammy/types";
import { pickPhotoSize, telegramAttachments } from "../../../src/bots/telegram/telegram-attachments.js";
import { encodeHistoryElement } from "../../../src/history/history-store.js";

const sizes = [
  { file_id: "s", file_unique_id: "1", width: 90, height: 60, file_size: 2_000 },
  { file_id: "m", file_unique_id: "2", width: 320, height: 213, file_size: 20_000 },
  { file_id: "x", file_unique_id: "3", width: 1280, height: 853, file_size: 200_000 },
  { file_id: "w", file_unique_id: "4", width: 2560, height: 1706, file_size: 900_000 },
];

describe("Telegram attachments", () => {
  it("takes the largest photo size within the limit, the smallest when none fits", () => {
    expect(pickPhotoSize(sizes, 10_000_000)?.file_id).toBe("w");
    expect(pickPhotoSize(sizes, 500_000)?.file_id).toBe("x");
    expect(pickPhotoSize(sizes, 1_000)?.file_id).toBe("s");
  });

  it("lists the message's photo and the replied-to message's document, marked as from the reply", () => {
    const reply = {
      message_id: 3,
      date: 0,
      chat: { id: 1, type: "private" },
      document: {
        file_id: "d",
        file_unique_id: "u",
        file_name: "report.pdf",
        mime_type: "application/pdf",
        file_size: 1234,
      },
    } as unknown as Message;
    const message = { message_id: 4, date: 0, chat: { id: 1, type: "private" }, photo: sizes } as unknown as Message;
    expect(telegramAttachments(message, reply, 500_000)).toEqual([
      { ref: "x", name: "photo-4.jpg", contentType: "image/jpeg", size: 200_000 },
      { ref: "d", name: "report.pdf", contentType: "application/pdf", size: 1234, fromReply: true },
    ]);
  });

  it("a user message's image parts never reach the stored history element", () => {
    const element = encodeHistoryElement(
      {
        role: "user",
        content: "look\n[image: a.jpg]",
        images: [{ name: "a.jpg", mediaType: "image/jpeg", base64: "QUJD" }],
      },
      5,
    );
    expect(element).toBe('u5|{"role":"user","content":"look\\n[image: a.jpg]"}');
  });
});
