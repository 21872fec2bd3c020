/**
 * Discord end to end, who the bot talks to and what it remembers: a DM is a conversation of its
 * own, a thread is separate from its parent channel, a reply to the bot needs no mention, a
 * channel's conversation is shared by everyone in it (the model sees "Alice: …"), and messages
 * from bots, webhooks, system events or the bot's own account never reach the model.
 */
import { describe, expect } from "vitest";
import { MessageType } from "discord.js";
import { textAnswer } from "../fakes/openai-server.js";
import { botAnswer, sentToModel, userTurns } from "./discord-harness.js";
import { e2eTest } from "../support/fixtures.js";

// Quick turns: the fake's bucket scaled down so pacing does not dominate the test time.
const quick = { discord: { messageWriteLimit: { limit: 5, windowMs: 500 } } };

describe("Discord conversations, end to end", () => {
  e2eTest("a DM is answered without a mention and remembered as a private conversation", async ({ startDiscord }) => {
    const e2e = await startDiscord(quick);
    const { discord, model } = e2e;
    const dm = discord.ids.dm;
    model.script([textAnswer("Hi Alice! Nice to meet you."), textAnswer("You said hello and asked how I am.")]);

    const hello = discord.userSays({ channelId: dm, content: "hello there" });
    const first = await botAnswer(discord, dm, (c) => c === "Hi Alice! Nice to meet you.");
    expect(first.message_reference?.message_id).toBe(hello.id);

    discord.userSays({ channelId: dm, content: "what did I just say?" });
    await botAnswer(discord, dm, (c) => c === "You said hello and asked how I am.");

    // Private: no speaker prefix; the earlier exchange came along as history.
    expect(sentToModel(model, 1).filter((m) => m.role !== "system")).toEqual([
      { role: "user", content: "hello there" },
      expect.objectContaining({ role: "assistant", content: "Hi Alice! Nice to meet you." }),
      { role: "user", content: "what did I just say?" },
    ]);
    expect(discord.botMessages(discord.ids.general)).toEqual([]);
  });

  e2eTest(
    "a thread is its own conversation: separate history from its parent channel, answered in the thread",
    async ({ startDiscord }) => {
      const e2e = await startDiscord(quick);
      const { discord, model } = e2e;
      const { general, thread } = discord.ids;
      model.script([
        textAnswer("Noted: the build is red."),
        textAnswer("Thread answer: use the staging key."),
        textAnswer("The build was red."),
      ]);

      discord.userSays({ channelId: general, content: "the build is red", mentionsBot: true });
      await botAnswer(discord, general, (c) => c.includes("build is red"));

      const inThread = discord.userSays({ channelId: thread, content: "which key for staging?", mentionsBot: true });
      const threadAnswer = await botAnswer(discord, thread, (c) => c.includes("staging key"));
      expect(threadAnswer.message_reference?.message_id).toBe(inThread.id);
      // The thread's model request knows nothing of the parent channel.
      expect(userTurns(model, 1)).toEqual(["Alice: which key for staging?"]);

      discord.userSays({ channelId: general, content: "what was the status?", mentionsBot: true });
      await botAnswer(discord, general, (c) => c === "The build was red.");
      // And the parent channel's history knows nothing of the thread.
      expect(userTurns(model, 2)).toEqual(["Alice: the build is red", "Alice: what was the status?"]);
      expect(discord.botMessages(general)).toHaveLength(2);
      expect(discord.botMessages(thread)).toHaveLength(1);
    },
  );

  e2eTest(
    "a reply to the bot is answered without a mention; chatter and replies to others are not",
    async ({ startDiscord }) => {
      const e2e = await startDiscord(quick);
      const { discord, model } = e2e;
      const channelId = discord.ids.general;
      model.script([
        textAnswer("Paris is the capital of France."),
        textAnswer("About 2.1 million people live in Paris."),
      ]);

      const bobSaid = discord.userSays({ channelId, author: discord.users.bob, content: "capital of France?" });
      discord.userSays({ channelId, content: "what is the capital of France?", mentionsBot: true });
      const answer = await botAnswer(discord, channelId, (c) => c.startsWith("Paris is"));

      // Not for the bot: plain chatter, and a reply to Bob (even with the reply ping on).
      discord.userSays({ channelId, author: discord.users.carol, content: "nice weather today" });
      discord.userSays({ channelId, author: discord.users.carol, content: "I think it's Lyon", replyTo: bobSaid.id });
      // For the bot: Carol replies to its answer with the reply ping switched off, no mention anywhere.
      const followUp = discord.userSays({
        channelId,
        author: discord.users.carol,
        content: "and how many people live there?",
        replyTo: answer.id,
        mentionRepliedUser: false,
      });
      expect(followUp.content).not.toContain(discord.bot.id);
      const second = await botAnswer(discord, channelId, (c) => c.includes("2.1 million"));

      expect(second.message_reference?.message_id).toBe(followUp.id);
      expect(model.requests).toHaveLength(2);
      // The model is told who speaks and what they are replying to.
      expect(userTurns(model, 1).at(-1)).toBe(
        'carol: (replying to testbot: "Paris is the capital of France.")\nand how many people live there?',
      );
    },
  );

  e2eTest("a channel is one shared conversation: Bob can ask what Alice asked", async ({ startDiscord }) => {
    const e2e = await startDiscord(quick);
    const { discord, model } = e2e;
    const channelId = discord.ids.general;
    model.script([textAnswer("Teal is a lovely colour."), textAnswer("Alice said her favourite colour is teal.")]);

    discord.userSays({ channelId, content: "my favourite colour is teal", mentionsBot: true });
    await botAnswer(discord, channelId, (c) => c.startsWith("Teal"));
    const bobAsks = discord.userSays({
      channelId,
      author: discord.users.bob,
      content: "what did Alice ask?",
      mentionsBot: true,
    });
    const answer = await botAnswer(discord, channelId, (c) => c.startsWith("Alice said"));

    expect(answer.message_reference?.message_id).toBe(bobAsks.id);
    // Bob speaks as his server nickname; Alice's turn came from the shared history with her name on it.
    expect(sentToModel(model, 1).filter((m) => m.role !== "system")).toEqual([
      { role: "user", content: "Alice: my favourite colour is teal" },
      expect.objectContaining({ role: "assistant", content: "Teal is a lovely colour." }),
      { role: "user", content: "Bobby: what did Alice ask?" },
    ]);
  });

  e2eTest(
    "messages from other bots, webhooks, system events and the bot's own account never reach the model",
    async ({ startDiscord }) => {
      const e2e = await startDiscord(quick);
      const { discord, model } = e2e;
      const channelId = discord.ids.general;
      model.script([textAnswer("Only Alice gets an answer.")]);

      discord.userSays({
        channelId,
        author: discord.users.otherBot,
        content: "answer me, fellow bot",
        mentionsBot: true,
      });
      discord.userSays({
        channelId,
        content: "posted by a webhook",
        mentionsBot: true,
        webhookId: "1100000000000000099",
      });
      discord.userSays({ channelId, content: "", type: MessageType.UserJoin });
      const own = discord.userSays({ channelId, author: discord.bot, content: "talking to myself", mentionsBot: true });
      discord.userSays({ channelId: discord.ids.dm, author: discord.users.otherBot, content: "a bot in a DM" });
      // A sentinel from a person, after the others in the same channel: once it is answered, they were all handled.
      discord.userSays({ channelId, content: "is anyone there?", mentionsBot: true });
      await botAnswer(discord, channelId, (c) => c === "Only Alice gets an answer.");

      expect(model.requests).toHaveLength(1);
      expect(userTurns(model, 0)).toEqual(["Alice: is anyone there?"]);
      expect(discord.botMessages(channelId).filter((m) => m.id !== own.id)).toHaveLength(1);
      expect(discord.botMessages(discord.ids.dm)).toEqual([]);
    },
  );
});
