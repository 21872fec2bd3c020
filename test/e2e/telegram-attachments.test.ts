/**
 * Pictures and files from Telegram, end to end (fake Bot API serving getFile and file downloads,
 * fake llama-server answering /props, real Redis, bots + worker roles): a captioned photo reaches
 * the model as one JPEG image part no larger than 1024 px beside the caption; in a group the
 * caption must address the bot, and "@bot what is in this picture?" under someone's photo uses that
 * photo; PDFs and text files are answered from their text; a model without vision says so; hostile
 * pictures are refused and the bot keeps answering; the history holds no picture bytes.
 */
import { describe, expect } from "vitest";
import { privateChat, type FakeChat, type FakeUser } from "../fakes/telegram-server.js";
import { httpError, textAnswer } from "../fakes/openai-server.js";
import { lastUserParts } from "../support/model-request.js";
import { IMAGES_UNSUPPORTED_LINE } from "../../src/answer/answer-message.js";
import { e2eTest } from "../support/fixtures.js";
import { decodeDataUrl, noisePng, onePagePdf, pngBomb, twoColourPhoto } from "../support/test-images.js";
import { storedHistoryText } from "../support/stored-history.js";

const alice: FakeUser = { id: 1001, first_name: "Alice" };
const bob: FakeUser = { id: 1002, first_name: "Bob" };
const group: FakeChat = { id: -100555, type: "supergroup", title: "Photos" };

const seeing = { model: { props: { vision: true } } };

describe("Telegram pictures and files, end to end", () => {
  e2eTest(
    "a captioned photo in a private chat reaches the model as one scaled JPEG beside the caption; history keeps only a marker",
    async ({ startTelegram }) => {
      const e2e = await startTelegram(seeing);
      const { tg, model } = e2e;
      model.script([
        textAnswer("The left half is red and the right half is blue."),
        textAnswer("It was red and blue."),
      ]);

      const { message } = await tg.userSendsFile(privateChat(alice), alice, {
        kind: "photo",
        bytes: await twoColourPhoto(2000, 1500),
        caption: "What is in this picture?",
      });
      await tg.waitFor(
        () => tg.botMessages(alice.id).at(-1)?.text === "The left half is red and the right half is blue.",
        { timeoutMs: 10_000, what: "the answer" },
      );

      const parts = lastUserParts(model.requests[0]);
      expect(parts.map((p) => p.type)).toEqual(["text", "image_url"]);
      expect(parts[0]?.text).toBe(`What is in this picture?\n[image: photo-${message.message_id}.jpg]`);
      const seen = await decodeDataUrl(parts[1]?.image_url.url);
      // Telegram's largest size (2000×1500) was taken and scaled to 1024 px on its longer side.
      expect(seen).toMatchObject({ format: "jpeg", width: 1024, height: 768 });
      expect(seen.leftPixel[0]).toBeGreaterThan(200);
      expect(seen.rightPixel[2]).toBeGreaterThan(200);
      expect(tg.files.downloads.map((d) => d.status)).toEqual([200]);

      // The next turn carries the earlier picture as a marker only; Redis never saw its bytes.
      tg.userSays(privateChat(alice), alice, "what colours were they?");
      await tg.waitFor(() => tg.botMessages(alice.id).at(-1)?.text === "It was red and blue.", {
        timeoutMs: 10_000,
        what: "the second answer",
      });
      const history = model.requests[1]?.body.messages?.filter((m) => m.role !== "system");
      expect(history?.[0]).toEqual({
        role: "user",
        content: `What is in this picture?\n[image: photo-${message.message_id}.jpg]`,
      });
      expect(JSON.stringify(history)).not.toContain("base64");
      const stored = await storedHistoryText(e2e.stack.redis);
      expect(stored).toContain(`[image: photo-${message.message_id}.jpg]`);
      expect(stored).not.toMatch(/base64|data:image/);
    },
  );

  e2eTest(
    "in a group: a photo whose caption mentions the bot, and a mention under someone else's photo",
    async ({ startTelegram }) => {
      const e2e = await startTelegram(seeing);
      const { tg, model } = e2e;
      model.script([textAnswer("A red and blue flag."), textAnswer("Bob's picture is red and blue too.")]);

      // A photo nobody addressed to the bot is not answered.
      const { message: bobsPhoto } = await tg.userSendsFile(group, bob, {
        kind: "photo",
        bytes: await twoColourPhoto(640, 480),
        caption: "my new flag",
      });
      await tg.userSendsFile(group, alice, {
        kind: "photo",
        bytes: await twoColourPhoto(800, 600),
        caption: "@test_bot what is this?",
      });
      await tg.waitFor(() => tg.botMessages(group.id).at(-1)?.text === "A red and blue flag.", {
        timeoutMs: 10_000,
        what: "the first answer",
      });
      const first = lastUserParts(model.requests[0]);
      expect(first[0]?.text).toMatch(/^Alice: what is this\?\n\[image: photo-\d+\.jpg\]$/);
      expect(first.filter((p) => p.type === "image_url")).toHaveLength(1);
      expect(await decodeDataUrl(first[1]?.image_url.url)).toMatchObject({ width: 800, height: 600 });

      tg.userSays(group, alice, "@test_bot what is in this picture?", { replyTo: bobsPhoto.message_id as number });
      await tg.waitFor(() => tg.botMessages(group.id).at(-1)?.text === "Bob's picture is red and blue too.", {
        timeoutMs: 10_000,
        what: "the second answer",
      });
      const second = lastUserParts(model.requests[1]);
      expect(second[0]?.text).toBe(
        `Alice: (replying to Bob: "my new flag")\nwhat is in this picture?\n[image: photo-${bobsPhoto.message_id}.jpg]`,
      );
      expect(await decodeDataUrl(second[1]?.image_url.url)).toMatchObject({ format: "jpeg", width: 640, height: 480 });
      expect(model.requests).toHaveLength(2);
    },
  );

  e2eTest("answers a PDF and a .txt file from their text", async ({ startTelegram }) => {
    const e2e = await startTelegram();
    const { tg, model } = e2e;
    model.script([textAnswer("The invoice total is 99 euros."), textAnswer("The password is swordfish.")]);

    await tg.userSendsFile(privateChat(alice), alice, {
      kind: "document",
      bytes: onePagePdf("Invoice total: 99 euros"),
      fileName: "invoice.pdf",
      mimeType: "application/pdf",
      caption: "how much?",
    });
    await tg.waitFor(() => tg.botMessages(alice.id).at(-1)?.text === "The invoice total is 99 euros.", {
      timeoutMs: 10_000,
      what: "the PDF answer",
    });
    await tg.userSendsFile(privateChat(alice), alice, {
      kind: "document",
      bytes: Buffer.from("shopping: milk\npassword: swordfish\n"),
      fileName: "notes.txt",
      mimeType: "text/plain",
    });
    await tg.waitFor(() => tg.botMessages(alice.id).at(-1)?.text === "The password is swordfish.", {
      timeoutMs: 10_000,
      what: "the text file answer",
    });

    expect(lastUserParts(model.requests[0])).toEqual([
      { type: "text", text: "how much?\n[file: invoice.pdf]\n\nFile invoice.pdf:\n```\nInvoice total: 99 euros\n```" },
    ]);
    expect(model.requests[1]?.body.messages?.at(-1)).toEqual({
      role: "user",
      content: "[file: notes.txt]\n\nFile notes.txt:\n```\nshopping: milk\npassword: swordfish\n```",
    });
    // Later turns remember the files by name, not by content.
    expect(model.requests[1]?.body.messages?.filter((m) => m.role === "user")[0]?.content).toBe(
      "how much?\n[file: invoice.pdf]",
    );
  });

  e2eTest(
    "a model that cannot see: the reply says so and how to fix it, and still answers the text",
    async ({ startTelegram }) => {
      const e2e = await startTelegram();
      const { tg, model } = e2e;
      model.script([textAnswer("I cannot see it, but a sunset is usually orange.")]);

      await tg.userSendsFile(privateChat(alice), alice, {
        kind: "photo",
        bytes: await twoColourPhoto(400, 300),
        caption: "what colour is this sunset?",
      });
      const answer = await tg.waitFor(() => tg.botMessages(alice.id).find((m) => m.text.includes("usually orange")), {
        timeoutMs: 10_000,
        what: "the answer",
      });
      expect(answer.text).toContain("This model cannot see pictures, so I answered from the text only.");
      expect(answer.text).toContain("MODEL_VISION");
      expect(answer.text).toContain("Qwen3-VL-2B");
      const sent = model.requests[0]?.body.messages?.at(-1);
      expect(sent?.content).toMatch(
        /^what colour is this sunset\?\n\[image: photo-\d+\.jpg \(not shown: this model cannot see images\)\]$/,
      );
      // Nothing was downloaded for a model that could not use it.
      expect(tg.files.downloads).toEqual([]);
    },
  );

  e2eTest(
    "MODEL_VISION=on in front of llama-server without an mmproj: one request, then a line saying what to change",
    async ({ startTelegram }) => {
      const e2e = await startTelegram({ env: { MODEL_VISION: "on" } });
      const { tg, model } = e2e;
      // llama-server's words when a picture reaches a model loaded without its projector.
      model.setHandler(() =>
        httpError(
          500,
          "image input is not supported - hint: if this is unexpected, you may need to provide the mmproj",
          "server_error",
        ),
      );
      await tg.userSendsFile(privateChat(alice), alice, {
        kind: "photo",
        bytes: await twoColourPhoto(300, 200),
        caption: "what is it?",
      });
      const reply = await tg.waitFor(
        () => tg.botMessages(alice.id).find((m) => m.text.includes("does not take pictures")),
        { timeoutMs: 10_000, what: "the failure line" },
      );
      expect(reply.text).toBe(IMAGES_UNSUPPORTED_LINE.replace(/`/g, ""));
      // Not retried: the same request cannot succeed. The chat's next question is the model's second request
      // (a conversation's jobs run in order: a retry would have come before it).
      model.setHandler(() => textAnswer("Text works."));
      tg.userSays(privateChat(alice), alice, "and in words?");
      await tg.waitFor(() => tg.botMessages(alice.id).some((m) => m.text === "Text works."), {
        timeoutMs: 10_000,
        what: "the next answer",
      });
      expect(model.requests).toHaveLength(2);
    },
  );

  e2eTest(
    "refuses an oversized, a corrupt and a 30000×30000 picture with a clear line, and keeps answering",
    async ({ startTelegram }) => {
      const e2e = await startTelegram({ ...seeing, env: { MAX_IMAGE_BYTES: "300000" } });
      const { tg, model } = e2e;
      model.setHandler(() => textAnswer("Answered."));
      const chat = privateChat(alice);
      const cases = [
        {
          bytes: await noisePng(600, 600),
          fileName: "huge.png",
          mimeType: "image/png",
          line: /huge\.png is too large \(1(\.\d)? MB; the limit is 293 KB\)/,
        },
        {
          bytes: Buffer.from("\xff\xd8\xff\xe0 definitely not a jpeg", "latin1"),
          fileName: "broken.jpg",
          mimeType: "image/jpeg",
          line: /broken\.jpg could not be read as a picture/,
        },
        {
          bytes: pngBomb(30_000, 30_000),
          fileName: "bomb.png",
          mimeType: "image/png",
          line: /bomb\.png is too big to open \(30000×30000 pixels\)/,
        },
      ];
      for (const [i, c] of cases.entries()) {
        await tg.userSendsFile(chat, alice, {
          kind: "document",
          bytes: c.bytes,
          fileName: c.fileName,
          mimeType: c.mimeType,
          caption: `picture ${i}`,
        });
        const reply = await tg.waitFor(
          () => tg.botMessages(alice.id)[i]?.text.includes("Answered.") && tg.botMessages(alice.id)[i],
          { timeoutMs: 10_000, what: `the answer to ${c.fileName}` },
        );
        expect(reply.text).toMatch(c.line);
        expect(lastUserParts(model.requests[i]).map((p) => p.type)).toEqual(["text"]);
      }
      // The oversized file was refused from its declared size: only the other two were downloaded.
      expect(tg.files.downloads.map((d) => d.status)).toEqual([200, 200]);
      tg.userSays(chat, alice, "still there?");
      await tg.waitFor(() => tg.botMessages(alice.id).length === 4, {
        timeoutMs: 10_000,
        what: "an answer after the refusals",
      });
    },
  );
});
