/**
 * The worker's Telegram downloads against the fake Bot API: getFile then the file URL under the API
 * root; unknown files, files over the limit and a refused download give short errors that never
 * carry the bot token (it is part of the download URL).
 */
import { afterEach, describe, expect, it } from "vitest";
import { Api } from "grammy";
import { privateChat, startFakeTelegram, type FakeTelegram } from "../../fakes/telegram-server.js";
import { createTelegramFileSource } from "../../../src/bots/telegram/telegram-file-source.js";

let tg: FakeTelegram | undefined;
afterEach(async () => {
  await tg?.close();
  tg = undefined;
});

const alice = { id: 1001, first_name: "Alice" };

describe("Telegram file source", () => {
  it("downloads a document, refuses one over the limit and unknown ids, and never shows the token", async () => {
    tg = await startFakeTelegram();
    const bytes = Buffer.from("hello from a file\n".repeat(100));
    const { message } = await tg.userSendsFile(privateChat(alice), alice, {
      kind: "document",
      bytes,
      fileName: "a.txt",
      mimeType: "text/plain",
    });
    const fileId = (message.document as { file_id: string }).file_id;
    const source = createTelegramFileSource({
      api: new Api(tg.token, { apiRoot: tg.apiRoot }),
      token: tg.token,
      apiRoot: tg.apiRoot,
    });
    const ref = { ref: fileId, name: "a.txt", contentType: "text/plain" };

    expect(Buffer.from(await source.download(ref, { maxBytes: 1_000_000 }))).toEqual(bytes);
    await expect(source.download(ref, { maxBytes: 100 })).rejects.toThrow(
      "a.txt is too large (2 KB; the limit is 1 KB)",
    );
    await expect(source.download({ ...ref, ref: "nope" }, { maxBytes: 1_000_000 })).rejects.toThrow(
      "a.txt could not be fetched from Telegram",
    );

    // The download URL is refused (wrong token in the URL, e.g. a rotated token): a short error without the URL.
    const stale = createTelegramFileSource({
      api: new Api(tg.token, { apiRoot: tg.apiRoot }),
      token: "123:stale-token-value",
      apiRoot: tg.apiRoot,
    });
    const failure = await stale.download(ref, { maxBytes: 1_000_000 }).catch((e: Error) => e);
    expect(String(failure)).toBe("AttachmentError: a.txt could not be downloaded from Telegram (HTTP 404)");
    expect(String(failure)).not.toContain("stale-token");
  });
});
