/**
 * A thread per question (DISCORD_AUTO_THREAD=true): a mention in a server channel opens one public
 * thread on that message, named from the question; the whole answer streams there, nothing in the
 * channel; a follow-up in the thread without a mention is answered with the first question in context.
 * A server admin switches it per channel with `/settings threads on|off`, whatever DISCORD_AUTO_THREAD says.
 */
import { describe, expect } from "vitest";
import { textAnswer } from "../fakes/openai-server.js";
import { botAnswer, userTurns, writesTo } from "./discord-harness.js";
import { e2eTest } from "../support/fixtures.js";

const quick = { messageWriteLimit: { limit: 5, windowMs: 500 } };

describe("Discord: a thread per question", () => {
  e2eTest(
    "a mention opens one thread, the answer is inside it, a follow-up needs no mention",
    async ({ startDiscord }) => {
      const e2e = await startDiscord({ discord: quick, env: { DISCORD_AUTO_THREAD: "true" } });
      const { discord, model } = e2e;
      const { general } = discord.ids;
      const longAnswer = `Paris is the capital of France. ${"It sits on the Seine. ".repeat(40)}`.trim();
      model.script([textAnswer(longAnswer), textAnswer("You asked about the capital of France.")]);

      const question = `what is the capital of France? ${"Please explain in detail. ".repeat(8)}`.trim();
      const asked = discord.userSays({ channelId: general, content: question, mentionsBot: true });
      await expect.poll(() => discord.threadsStarted.length).toBe(1);
      const thread = discord.threadsStarted[0]!;
      expect(thread).toBe(asked.id);
      const created = discord.requests.find((r) => r.route === "POST /channels/:id/messages/:id/threads");
      const name = String(created?.body?.name ?? "");
      expect([...name].length).toBeLessThanOrEqual(100);
      expect(name.startsWith("what is the capital of France?")).toBe(true);

      // The whole answer, streamed by edits, ends up in the thread.
      await botAnswer(discord, thread, (c) => c === longAnswer);
      // Nothing of the answer in the channel itself.
      expect(writesTo(discord, general)).toEqual([]);

      discord.userSays({ channelId: thread, content: "what did I ask?" });
      await botAnswer(discord, thread, (c) => c === "You asked about the capital of France.");
      expect(userTurns(model, 1)).toEqual([`Alice: ${question}`, "Alice: what did I ask?"]);
      expect(discord.threadsStarted).toHaveLength(1);
    },
  );

  e2eTest("off by default: the answer stays in the channel, no thread", async ({ startDiscord }) => {
    const e2e = await startDiscord({ discord: quick });
    const { discord, model } = e2e;
    model.script([textAnswer("In the channel.")]);
    discord.userSays({ channelId: discord.ids.general, content: "hi", mentionsBot: true });
    await botAnswer(discord, discord.ids.general, (c) => c === "In the channel.");
    expect(discord.threadsStarted).toEqual([]);
  });

  e2eTest(
    "/settings threads on in one channel: questions there get a thread, other channels do not; only admins may switch",
    async ({ startDiscord }) => {
      const e2e = await startDiscord({ discord: quick });
      const { discord, model } = e2e;
      const { general, random } = discord.ids;
      model.script([textAnswer("In a thread."), textAnswer("In the channel.")]);

      // Alice is no admin here: refused (only she sees it), nothing changes.
      const refused = discord.runCommand({
        channelId: general,
        name: "settings",
        options: [{ name: "threads", value: "on" }],
      });
      const refusal = await discord.waitFor(() =>
        discord.interactionResponses.find((r) => r.interactionId === refused.id),
      );
      expect(refusal.ephemeral).toBe(true);
      // Bob moderates (Manage Channels): switched on for #general.
      const { id } = discord.runCommand({
        channelId: general,
        name: "settings",
        user: discord.users.bob,
        options: [{ name: "threads", value: "on" }],
      });
      const done = await discord.waitFor(() => discord.interactionResponses.find((r) => r.interactionId === id));
      expect(String(done.data?.content)).toMatch(/thread of its own/);

      const asked = discord.userSays({ channelId: general, content: "a question", mentionsBot: true });
      await botAnswer(discord, asked.id, (c) => c === "In a thread.");
      expect(discord.threadsStarted).toEqual([asked.id]);
      expect(writesTo(discord, general)).toEqual([]);

      discord.userSays({ channelId: random, content: "another", mentionsBot: true });
      await botAnswer(discord, random, (c) => c === "In the channel.");
      expect(discord.threadsStarted).toHaveLength(1);
    },
  );

  e2eTest("/settings threads off in a channel overrides DISCORD_AUTO_THREAD=true", async ({ startDiscord }) => {
    const e2e = await startDiscord({ discord: quick, env: { DISCORD_AUTO_THREAD: "true" } });
    const { discord, model } = e2e;
    const { general } = discord.ids;
    model.script([textAnswer("Right here.")]);
    discord.userSays({
      channelId: general,
      content: "/settings threads off",
      mentionsBot: true,
      author: discord.users.bob,
    });
    await botAnswer(discord, general, (c) => c.includes("answers here stay in the channel"));
    discord.userSays({ channelId: general, content: "a question", mentionsBot: true });
    await botAnswer(discord, general, (c) => c === "Right here.");
    expect(discord.threadsStarted).toEqual([]);
  });
});
