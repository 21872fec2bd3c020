/**
 * Discord end to end, the reply as people see it: a mention in a channel streams into one reply
 * message paced inside the channel's bucket (Discord's real 5 per 5 s, and a looser one learnt
 * from the headers), a long answer continues over several messages within 2000 characters with
 * code fences balanced and nothing lost, and model output pings no one.
 */
import { describe, expect } from "vitest";
import { paced, textAnswer, toolCallAnswer } from "../fakes/openai-server.js";
import { botAnswer, fencesBalanced, mostInAnyWindow, userTurns, writesTo } from "./discord-harness.js";
import { e2eTest } from "../support/fixtures.js";

/** Lines a reader sees, without fence lines and blank lines (fences are closed and reopened at splits). */
const contentLines = (text: string): string[] =>
  text
    .split("\n")
    .filter((line) => line.trim() !== "" && !/^ {0,3}```/.test(line))
    .map((line) => line.trimEnd());

describe("Discord: a mention in a channel", () => {
  e2eTest(
    "streams a reply inside Discord's real 5-per-5-s bucket: first message at once, paced edits, final text replying to the user",
    async ({ startDiscord }) => {
      const e2e = await startDiscord();
      const { discord, model } = e2e;
      const answer =
        "Beijing is warmer today: 31°C against London's cooler weather. Take light clothes, drink water, and keep an umbrella near in case the afternoon storm arrives.";
      model.script([
        toolCallAnswer([{ name: "get_weather", arguments: { city: "Beijing" } }]),
        // ~30 tokens at 10/s: the model writes for about three seconds.
        paced(textAnswer(answer), 10),
      ]);
      const channelId = discord.ids.general;
      const asked = discord.userSays({ channelId, content: "is it warm in Beijing?", mentionsBot: true });
      const askedAt = Date.now();

      const first = await discord.waitFor(() => writesTo(discord, channelId)[0], { label: "the first message" });
      const final = await botAnswer(discord, channelId, (c) =>
        c.includes("umbrella near in case the afternoon storm arrives."),
      );

      // One reply message, threaded under Alice's question, with the whole answer and the finished tool.
      expect(discord.botMessages(channelId)).toHaveLength(1);
      expect(final.message_reference?.message_id).toBe(asked.id);
      expect(final.content).toContain(answer);
      // Markdown-escaped: Discord shows "✅ get_weather(Beijing)".
      expect(final.content).toContain("✅ get\\_weather(Beijing)");
      // Something visible long before the answer: the placeholder, threaded under the question (~60 ms when idle).
      expect(first.method).toBe("POST");
      expect(first.body?.content).toBe("…");
      expect(first.messageReference).toMatchObject({ message_id: asked.id });
      expect(first.at - askedAt).toBeLessThan(2500);

      const writes = writesTo(discord, channelId);
      // The text grew in several visible steps while the model wrote, not in one jump at the end.
      const partial = writes.filter((w) => {
        const content = String(w.body?.content ?? "");
        return w.method === "PATCH" && content.includes("Beijing is warmer") && !content.includes("storm arrives.");
      });
      expect(partial.length).toBeGreaterThanOrEqual(2);
      // Paced inside the bucket by the bot's own editor: evenly ~1 s apart (not bursts into a 429 wall; the
      // margin is for request latency under load), no 429 earned, never more than 5 writes in any 5 s.
      const gaps = writes.slice(1).map((w, i) => w.at - writes[i]!.at);
      expect(Math.min(...gaps)).toBeGreaterThanOrEqual(600);
      expect(discord.violations).toEqual([]);
      expect(writes.every((w) => w.status === 200)).toBe(true);
      expect(
        mostInAnyWindow(
          writes.map((w) => w.at),
          5000,
        ),
      ).toBeLessThanOrEqual(5);
      // The typing indicator showed while the bot worked.
      expect(discord.typing.some((t) => t.channelId === channelId)).toBe(true);
      // The model heard who asked (a channel is a shared conversation).
      expect(userTurns(model, 0)).toEqual(["Alice: is it warm in Beijing?"]);
    },
  );

  e2eTest(
    "paces by what the X-RateLimit headers say: a looser bucket gets quicker edits, still without a 429",
    async ({ startDiscord }) => {
      // 5 writes per 600 ms: once Discord's first answer told it so, the bot may write every ~120 ms,
      // not at its 1000 ms guess (the guess only covers the time before the first headers arrive).
      const e2e = await startDiscord({ discord: { messageWriteLimit: { limit: 5, windowMs: 600 } } });
      const { discord, model } = e2e;
      const answer = `${Array.from({ length: 60 }, (_, i) => `word${i}`).join(" ")}.`;
      model.script([paced(textAnswer(answer), 25)]);
      const channelId = discord.ids.random;
      discord.userSays({ channelId, content: "count for me", mentionsBot: true });
      await botAnswer(discord, channelId, (c) => c.includes("word59."));

      const writes = writesTo(discord, channelId);
      const gaps = writes.slice(1).map((w, i) => w.at - writes[i]!.at);
      // The model wrote for ~2.4 s: at a fixed 1 s spacing no two writes would be under 500 ms apart.
      expect(gaps.filter((gap) => gap < 500).length).toBeGreaterThanOrEqual(3);
      expect(discord.violations).toEqual([]);
      expect(
        mostInAnyWindow(
          writes.map((w) => w.at),
          600,
        ),
      ).toBeLessThanOrEqual(5);
    },
  );

  e2eTest(
    "a 6000-character answer with code arrives as ≥3 messages, each ≤2000 characters, fences balanced, nothing lost",
    async ({ startDiscord }) => {
      const e2e = await startDiscord({ discord: { messageWriteLimit: { limit: 5, windowMs: 1000 } } });
      const { discord, model } = e2e;
      const paragraph = (i: number) =>
        `Paragraph ${i}: ${"the quick brown fox jumps over the lazy dog ".repeat(7).trim()}.`;
      const tsBlock = [
        "```ts",
        ...Array.from({ length: 60 }, (_, i) => `const value${i} = compute(${i}) * 2; // step ${i}`),
        "```",
      ].join("\n");
      const pyBlock = ["```python", ...Array.from({ length: 12 }, (_, i) => `print("line ${i}")`), "```"].join("\n");
      const answer = [
        "Here is the whole walkthrough.",
        ...Array.from({ length: 6 }, (_, i) => paragraph(i)),
        tsBlock,
        ...Array.from({ length: 5 }, (_, i) => paragraph(i + 6)),
        pyBlock,
        "That is all.",
      ].join("\n\n");
      expect(answer.length).toBeGreaterThan(6000);
      model.script([textAnswer(answer)]);
      const channelId = discord.ids.general;
      const asked = discord.userSays({ channelId, content: "walk me through it", mentionsBot: true });

      await botAnswer(discord, channelId, (c) => c.includes("That is all."), { timeoutMs: 12_000 });
      const shown = discord.botMessages(channelId);

      expect(shown.length).toBeGreaterThanOrEqual(3);
      for (const message of shown) {
        expect([...message.content].length).toBeLessThanOrEqual(2000);
        expect(fencesBalanced(message.content)).toBe(true);
        expect(message.components).toEqual([]);
      }
      // Every line the model wrote is there, once, in order, across the messages.
      expect(shown.flatMap((m) => contentLines(m.content))).toEqual(contentLines(answer));
      // The code block cut by a split is reopened with its language in the next message.
      const reopened = shown.slice(1).find((m) => m.content.trimStart().startsWith("```ts"));
      expect(reopened?.content).toMatch(/^```ts\nconst value\d+/);
      // The first message answers Alice's question; the continuations follow it in the channel.
      expect(shown[0]!.message_reference?.message_id).toBe(asked.id);
      expect(shown.slice(1).every((m) => m.message_reference === undefined)).toBe(true);
      expect(discord.messages(channelId).map((m) => m.id)).toEqual([asked.id, ...shown.map((m) => m.id)]);
      expect(discord.violations).toEqual([]);
    },
  );

  e2eTest("model output with @everyone, @here, a role and a user mention pings no one", async ({ startDiscord }) => {
    const e2e = await startDiscord({ discord: { messageWriteLimit: { limit: 5, windowMs: 1000 } } });
    const { discord, model } = e2e;
    const roleId = discord.world.roles.moderators.id;
    const bobId = discord.users.bob.id;
    const answer = `Sure! Attention @everyone and @here: <@&${roleId}> please help <@${bobId}> and <@!${bobId}> with the deploy today.`;
    model.script([paced(textAnswer(answer), 20)]);
    const channelId = discord.ids.general;
    discord.userSays({ channelId, content: "tell everyone to help Bob", mentionsBot: true });

    const final = await botAnswer(discord, channelId, (c) => c.includes("with the deploy today."));

    // Nobody was notified by anything the bot wrote: not everyone, not the role, not Bob, not Alice (the replied-to user).
    expect(discord.pings.filter((p) => p.authorId === discord.bot.id)).toEqual([]);
    // Every write (placeholder, edits, final) told Discord to parse no mentions at all.
    const writes = writesTo(discord, channelId);
    expect(writes.length).toBeGreaterThanOrEqual(2);
    for (const write of writes) expect(write.allowedMentions).toEqual({ parse: [], replied_user: false });
    // The reader still sees what the model wrote (the defusing characters are invisible).
    expect(final.content.replaceAll("\u200D", "")).toBe(answer);
  });
});
