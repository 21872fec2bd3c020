/**
 * "Ask <bot>" from a message's Apps menu (a message command, application command type 3): Discord
 * delivers INTERACTION_CREATE with data.type 3, target_id and the message in resolved.messages; the
 * bot acknowledges within the 3 s Discord allows (a deferred reply only the asker sees), then answers
 * about the chosen message (its text, files and author) in a reply to it, or in its thread when
 * threads are on.
 */
import { ApplicationCommandType } from "discord.js";
import { describe, expect } from "vitest";
import { textAnswer } from "../fakes/openai-server.js";
import { lastUserParts } from "../support/model-request.js";
import { twoColourPhoto } from "../support/test-images.js";
import { botAnswer, userTurns, writesTo } from "./discord-harness.js";
import { e2eTest } from "../support/fixtures.js";

const quick = { messageWriteLimit: { limit: 5, windowMs: 500 } };
const ASK = "Ask testbot";

describe('Discord: "Ask <bot>" on a message', () => {
  e2eTest(
    "answers about the chosen message in a reply to it, after a deferred acknowledgement",
    async ({ startDiscord }) => {
      const { discord, model } = await startDiscord({ discord: quick });
      const { general } = discord.ids;
      // Registered once, with the other commands, as a message command named after the bot.
      expect(discord.commands.find((c) => c.name === ASK)?.type).toBe(ApplicationCommandType.Message);
      model.script([textAnswer("Yes: 330 m against 93 m.")]);

      const bobs = discord.userSays({
        channelId: general,
        author: discord.users.bob,
        content: "is the Eiffel tower taller than the Statue of Liberty?",
      });
      const { id } = discord.runMessageCommand({ channelId: general, messageId: bobs.id, name: ASK });

      // Acknowledged in time (the fake refuses a response after 3 s) and only for the asker.
      const ack = await discord.waitFor(() => discord.interactionResponses.find((r) => r.interactionId === id), {
        label: "the deferred acknowledgement",
      });
      expect(ack).toMatchObject({ type: 5, ephemeral: true });
      const answer = await botAnswer(discord, general, (c) => c === "Yes: 330 m against 93 m.");
      expect(answer.message_reference?.message_id).toBe(bobs.id);
      expect(discord.botMessages(general)).toHaveLength(1);
      console.log(
        discord.requests.filter((r) => !r.route.includes("channels")).map((r) => [r.method, r.path, r.route, r.status]),
      );

      const [turn] = userTurns(model, 0);
      // Asked by Alice (Bob's question is the subject, named with its author).
      expect(turn).toMatch(/^Alice: /);
      expect(turn).toContain("from Bobby");
      expect(turn).toContain("is the Eiffel tower taller than the Statue of Liberty?");
      await expect
        .poll(() => discord.interactionEdits.find((e) => e.interactionId === id)?.data?.content)
        .toBe("On it: my answer will be a reply to that message.");
    },
  );

  e2eTest("with threads on, the answer goes into a thread on the chosen message", async ({ startDiscord }) => {
    const { discord, model } = await startDiscord({ discord: quick, env: { DISCORD_AUTO_THREAD: "true" } });
    const { general } = discord.ids;
    model.script([textAnswer("It is a haiku about autumn.")]);
    const carols = discord.userSays({
      channelId: general,
      author: discord.users.carol,
      content: "old pond, a frog leaps in, the sound of water",
    });
    const { id } = discord.runMessageCommand({ channelId: general, messageId: carols.id, name: ASK });
    await expect.poll(() => discord.threadsStarted).toEqual([carols.id]);
    await botAnswer(discord, carols.id, (c) => c === "It is a haiku about autumn.");
    expect(writesTo(discord, general)).toEqual([]);
    await expect
      .poll(() => discord.interactionEdits.find((e) => e.interactionId === id)?.data?.content)
      .toBe(`On it: my answer is in the thread <#${carols.id}>.`);
  });

  e2eTest("the chosen message's picture reaches the model", async ({ startDiscord }) => {
    const { discord, model } = await startDiscord({ discord: quick, model: { props: { vision: true } } });
    const { general } = discord.ids;
    model.script([textAnswer("A red and blue square.")]);
    const bobs = await discord.userUploads({
      channelId: general,
      author: discord.users.bob,
      content: "",
      files: [{ filename: "bob.jpg", contentType: "image/jpeg", bytes: await twoColourPhoto(300, 300) }],
    });
    discord.runMessageCommand({ channelId: general, messageId: bobs.id, name: ASK });
    await botAnswer(discord, general, (c) => c === "A red and blue square.");
    const parts = lastUserParts(model.requests[0]);
    expect(parts.map((p) => p.type)).toEqual(["text", "image_url"]);
    expect(parts[0]?.text).toMatch(/^Alice: Please look at this message and its file from Bobby/);
    expect(parts[0]?.text).toContain("[image: bob.jpg]");
  });

  e2eTest(
    "in a DM, about the bot's own answer; asking twice about one message is one question",
    async ({ startDiscord }) => {
      const { discord, model } = await startDiscord({ discord: quick });
      const { dm } = discord.ids;
      model.script([textAnswer("42."), textAnswer("It is the answer to everything, from a novel.")]);
      discord.userSays({ channelId: dm, content: "the answer?" });
      const first = await botAnswer(discord, dm, (c) => c === "42.");

      const once = discord.runMessageCommand({ channelId: dm, messageId: first.id, name: ASK });
      await botAnswer(discord, dm, (c) => c === "It is the answer to everything, from a novel.");
      expect(discord.botMessages(dm).at(-1)?.message_reference?.message_id).toBe(first.id);
      expect(userTurns(model, 1).at(-1)).toMatch(/from testbot[\s\S]*42\.$/);
      await expect
        .poll(() => discord.interactionEdits.find((e) => e.interactionId === once.id)?.data?.content)
        .toBe("On it: my answer will be a reply to that message.");

      const twice = discord.runMessageCommand({ channelId: dm, messageId: first.id, name: ASK });
      await expect
        .poll(() => discord.interactionEdits.find((e) => e.interactionId === twice.id)?.data?.content)
        .toBe("I am answering that message already (or have answered it).");
      expect(model.requests).toHaveLength(2);
    },
  );
});
