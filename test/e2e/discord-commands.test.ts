/**
 * Discord end to end, the controls: `/reset` (as text to the bot, and as a slash command) makes
 * the model forget the conversation; `/compact` folds older turns into a summary; `/stop` and the Stop button under a reply being written
 * cut the answer short, abort the model request, leave a "stopped" note and remove the button,
 * and the conversation carries on afterwards.
 */
import { describe, expect, vi } from "vitest";
import { RESET_DONE_TEXT, stopResultText } from "../../src/bots/discord/discord-commands.js";
import { historyKeys } from "../../src/redis/keys.js";
import { STOP_BUTTON_ID } from "../../src/bots/discord/discord-stop-button.js";
import { paced, textAnswer } from "../fakes/openai-server.js";
import { botAnswer, sentToModel, userTurns } from "./discord-harness.js";
import { e2eTest } from "../support/fixtures.js";

const quick = { discord: { messageWriteLimit: { limit: 5, windowMs: 500 } } };

const STORY = `${Array.from({ length: 120 }, (_, i) => `Once upon a time, part ${i}.`).join(" ")} The end.`;
const STOPPED_NOTE = "⏹ _stopped_";

describe("Discord commands, end to end", () => {
  e2eTest("/reset sent to the bot makes the model forget the channel's conversation", async ({ startDiscord }) => {
    const e2e = await startDiscord(quick);
    const { discord, model } = e2e;
    const channelId = discord.ids.general;
    model.script([
      textAnswer("Got it: kiwi."),
      textAnswer("The code word is kiwi."),
      textAnswer("I don't know any code word."),
    ]);

    discord.userSays({ channelId, content: "the code word is kiwi", mentionsBot: true });
    await botAnswer(discord, channelId, (c) => c === "Got it: kiwi.");
    discord.userSays({ channelId, content: "what is the code word?", mentionsBot: true });
    await botAnswer(discord, channelId, (c) => c === "The code word is kiwi.");
    expect(userTurns(model, 1)).toEqual(["Alice: the code word is kiwi", "Alice: what is the code word?"]);

    const reset = discord.userSays({ channelId, content: "/reset", mentionsBot: true });
    const done = await botAnswer(discord, channelId, (c) => c === RESET_DONE_TEXT);
    expect(done.message_reference?.message_id).toBe(reset.id);

    discord.userSays({ channelId, content: "what is the code word?", mentionsBot: true });
    await botAnswer(discord, channelId, (c) => c === "I don't know any code word.");
    // The command itself never went to the model, and after it nothing of the old conversation did.
    expect(model.requests).toHaveLength(3);
    expect(userTurns(model, 2)).toEqual(["Alice: what is the code word?"]);
    expect(JSON.stringify(sentToModel(model, 2))).not.toContain("kiwi");
  });

  e2eTest(
    "/compact sent to the bot folds the channel's older turns into a summary that names the speakers",
    async ({ startDiscord }) => {
      const e2e = await startDiscord(quick);
      const { discord, model } = e2e;
      const channelId = discord.ids.general;
      const answers = ["Got it: kiwi.", "Noted, Friday.", "Kiwi, on Friday."];
      model.setHandler((request) =>
        request.body.stream === true
          ? textAnswer(answers.shift() ?? "OK.")
          : textAnswer("Alice set the code word kiwi; the meeting is on Friday."),
      );
      discord.userSays({ channelId, content: "the code word is kiwi", mentionsBot: true });
      await botAnswer(discord, channelId, (c) => c === "Got it: kiwi.");
      discord.userSays({ channelId, content: "the meeting is on Friday", mentionsBot: true });
      await botAnswer(discord, channelId, (c) => c === "Noted, Friday.");
      // The turn is stored right after its answer is shown; /compact does not wait in the queue.
      const key = historyKeys(e2e.stack.config.KEY_PREFIX, `dc:${channelId}`).list;
      await vi.waitFor(async () => expect(await e2e?.stack.redis.redis.llen(key)).toBe(4), { timeout: 5000 });

      discord.userSays({ channelId, content: "/compact", mentionsBot: true });
      const done = await botAnswer(discord, channelId, (c) => c.startsWith("🗜️ Done"));
      expect(done.content).toMatch(
        /^🗜️ Done: 2 earlier messages are now a short summary \(\d+ tokens\); I kept the last 2 as they are/,
      );
      // A channel is shared: the summary prompt asks for names and shows each speaker.
      const fold = model.requests.find((r) => r.body.stream !== true);
      expect(fold?.body.messages?.[0]?.content).toContain("say who said or asked what, by name");
      expect(fold?.body.messages?.[1]?.content).toContain("Alice: the code word is kiwi");

      discord.userSays({ channelId, content: "what do you remember?", mentionsBot: true });
      await botAnswer(discord, channelId, (c) => c === "Kiwi, on Friday.");
      const last = model.requests.filter((r) => r.body.stream === true).at(-1);
      expect(last?.body.messages?.[1]).toEqual({
        role: "system",
        content: "Earlier in this conversation: Alice set the code word kiwi; the meeting is on Friday.",
      });
    },
  );

  e2eTest(
    "the /reset slash command in a DM answers privately and clears the DM's history",
    async ({ startDiscord }) => {
      const e2e = await startDiscord(quick);
      const { discord, model } = e2e;
      const dm = discord.ids.dm;
      model.script([textAnswer("Noted, you like tea."), textAnswer("I don't know what you like.")]);
      // Registered at start, so the client offers it.
      await discord.waitFor(() => discord.commands.some((c) => c.name === "reset"), { label: "/reset registered" });

      discord.userSays({ channelId: dm, content: "I like tea" });
      await botAnswer(discord, dm, (c) => c === "Noted, you like tea.");
      const { id } = discord.runCommand({ channelId: dm, name: "reset" });
      const response = await discord.waitFor(() => discord.interactionResponses.find((r) => r.interactionId === id), {
        label: "the /reset response",
      });
      expect(response).toMatchObject({
        type: 4,
        ephemeral: true,
        data: expect.objectContaining({ content: RESET_DONE_TEXT }),
      });

      discord.userSays({ channelId: dm, content: "what do I like?" });
      await botAnswer(discord, dm, (c) => c === "I don't know what you like.");
      expect(userTurns(model, 1)).toEqual(["what do I like?"]);
    },
  );

  e2eTest(
    "/stop sent to the bot stops the answer being written, and the channel carries on",
    async ({ startDiscord }) => {
      const e2e = await startDiscord(quick);
      const { discord, model } = e2e;
      const channelId = discord.ids.general;
      // ~840 tokens at 40/s: about 20 s if nobody stopped it.
      model.script([paced(textAnswer(STORY), 40), textAnswer("Here is a shorter one.")]);

      discord.userSays({ channelId, content: "tell me a long story", mentionsBot: true });
      const writing = await discord.waitFor(
        () => discord.botMessages(channelId).find((m) => m.content.includes("part 3.")),
        { label: "the story being written" },
      );
      expect(writing.components).not.toEqual([]); // the Stop button shows while it is written

      const stop = discord.userSays({ channelId, content: "/stop", mentionsBot: true });
      const stoppedAt = Date.now();
      const confirmation = await botAnswer(discord, channelId, (c) => c === stopResultText(true));
      expect(confirmation.message_reference?.message_id).toBe(stop.id);
      const story = await discord.waitFor(
        () => {
          const m = discord.botMessages(channelId).find((x) => x.id === writing.id);
          return m?.content.endsWith(STOPPED_NOTE) && m.components?.length === 0 ? m : undefined;
        },
        { label: "the story's stopped note" },
      );
      expect(Date.now() - stoppedAt).toBeLessThan(4000);
      expect(story.content).not.toContain("The end.");
      expect(await model.requests[0]!.outcome).toBe("client-closed");

      discord.userSays({ channelId, content: "a shorter one, please", mentionsBot: true });
      await botAnswer(discord, channelId, (c) => c === "Here is a shorter one.");
      expect(userTurns(model, 1)).toEqual(["Alice: tell me a long story", "Alice: a shorter one, please"]);
    },
  );

  e2eTest("the Stop button under a reply being written stops it and disappears", async ({ startDiscord }) => {
    const e2e = await startDiscord(quick);
    const { discord, model } = e2e;
    const channelId = discord.ids.thread;
    model.script([paced(textAnswer(STORY), 40)]);

    discord.userSays({ channelId, content: "tell me a long story", mentionsBot: true });
    const writing = await discord.waitFor(
      () =>
        discord.botMessages(channelId).find((m) => m.content.includes("part 3.") && (m.components?.length ?? 0) > 0),
      { label: "the story being written, with its Stop button" },
    );

    const { id } = discord.clickButton({
      channelId,
      messageId: writing.id,
      customId: STOP_BUTTON_ID,
      user: discord.users.bob,
    });
    const clickedAt = Date.now();
    // The click is acknowledged in time (Discord allows 3 s) without a new message.
    const ack = await discord.waitFor(() => discord.interactionResponses.find((r) => r.interactionId === id), {
      label: "the click's acknowledgement",
    });
    expect(ack.type).toBe(6);
    const story = await discord.waitFor(
      () => {
        const m = discord.botMessages(channelId).find((x) => x.id === writing.id);
        return m?.content.endsWith(STOPPED_NOTE) && m.components?.length === 0 ? m : undefined;
      },
      { label: "the story's stopped note" },
    );
    expect(Date.now() - clickedAt).toBeLessThan(4000);
    expect(story.content).not.toContain("The end.");
    expect(discord.botMessages(channelId)).toHaveLength(1);
    expect(await model.requests[0]!.outcome).toBe("client-closed");
  });
});
