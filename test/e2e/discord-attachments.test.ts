/**
 * Pictures from Discord, end to end (the real discord.js client against the fake Discord, whose CDN
 * serves signed attachment URLs on its own host; fake llama-server with an mmproj): an image
 * attachment with a mention reaches the model as a scaled JPEG part, a question replying to someone's
 * picture uses that picture, and a picture alone in a DM is enough to be answered.
 */
import { describe, expect } from "vitest";
import { textAnswer } from "../fakes/openai-server.js";
import { lastUserParts } from "../support/model-request.js";
import { botAnswer } from "./discord-harness.js";
import { e2eTest } from "../support/fixtures.js";
import { decodeDataUrl, twoColourPhoto } from "../support/test-images.js";
import { storedHistoryText } from "../support/stored-history.js";

const options = { discord: { messageWriteLimit: { limit: 5, windowMs: 500 } }, model: { props: { vision: true } } };

describe("Discord pictures, end to end", () => {
  e2eTest(
    "an image attachment with a mention, then a question replying to someone's picture",
    async ({ startDiscord }) => {
      const e2e = await startDiscord(options);
      const { discord, model } = e2e;
      const channel = discord.ids.general;
      model.script([textAnswer("A red and blue banner."), textAnswer("Bob's picture is red on the left.")]);

      await discord.userUploads({
        channelId: channel,
        content: "what is this?",
        mentionsBot: true,
        files: [{ filename: "banner.png", contentType: "image/png", bytes: await twoColourPhoto(1600, 400) }],
      });
      await botAnswer(discord, channel, (c) => c === "A red and blue banner.");
      const first = lastUserParts(model.requests[0]);
      expect(first[0]?.text).toBe("Alice: what is this?\n[image: banner.png]");
      expect(first.filter((p) => p.type === "image_url")).toHaveLength(1);
      const seen = await decodeDataUrl(first[1]?.image_url.url);
      expect(seen).toMatchObject({ format: "jpeg", width: 1024, height: 256 });
      expect(seen.leftPixel[0]).toBeGreaterThan(200);

      // Bob posts a picture without addressing the bot; Alice asks about it by replying with a mention.
      const bobs = await discord.userUploads({
        channelId: channel,
        author: discord.users.bob,
        content: "look at this",
        files: [{ filename: "bob.jpg", contentType: "image/jpeg", bytes: await twoColourPhoto(500, 500) }],
      });
      discord.userSays({
        channelId: channel,
        content: "what is in this picture?",
        mentionsBot: true,
        replyTo: bobs.id,
      });
      await botAnswer(discord, channel, (c) => c === "Bob's picture is red on the left.");
      const second = lastUserParts(model.requests[1]);
      expect(second[0]?.text).toMatch(/what is in this picture\?\n\[image: bob\.jpg\]$/);
      expect(await decodeDataUrl(second[1]?.image_url.url)).toMatchObject({ width: 500, height: 500 });
      expect(model.requests).toHaveLength(2);
      expect(discord.attachmentDownloads.map((d) => d.status)).toEqual([200, 200]);
      expect(await storedHistoryText(e2e.stack.redis)).not.toMatch(/base64|data:image/);
    },
  );

  e2eTest("a picture alone in a DM is answered", async ({ startDiscord }) => {
    const e2e = await startDiscord(options);
    const { discord, model } = e2e;
    model.script([textAnswer("Two colours: red and blue.")]);
    await discord.userUploads({
      channelId: discord.ids.dm,
      content: "",
      files: [{ filename: "img.jpg", contentType: "image/jpeg", bytes: await twoColourPhoto(300, 300) }],
    });
    await botAnswer(discord, discord.ids.dm, (c) => c === "Two colours: red and blue.");
    expect(lastUserParts(model.requests[0]).map((p) => p.type)).toEqual(["text", "image_url"]);
    expect(lastUserParts(model.requests[0])[0]?.text).toBe("[image: img.jpg]");
  });
});
