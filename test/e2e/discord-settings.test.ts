/**
 * Per-conversation settings in Discord, end to end (the real discord.js client against the fake
 * Discord, a fake model server listing several models, real Redis): application commands with
 * options and autocomplete, the same commands as text to the bot, and the buttons under their
 * answers. In a server channel only members with Manage Server / Manage Channels may change
 * (Bob, a moderator, may; Alice may not, and nothing changes); in a DM the user decides. What a
 * channel chose is what its next model request carries, and it survives a restart of every role.
 */
import { describe, expect } from "vitest";
import type { APIMessage, APIUser } from "discord.js";
import { textAnswer, toolCallAnswer } from "../fakes/openai-server.js";
import type { FakeDiscord } from "../fakes/discord-server.js";
import { settingsCarriedBy } from "../support/request-settings.js";
import type { DiscordE2E } from "./discord-harness.js";
import { e2eTest, type E2EFixtures } from "../support/fixtures.js";

const MODELS = ["qwen3-1.7b", "qwen3-4b", "qwen3-8b"];
const REFUSAL = "🔒 Only admins of this chat can change its settings. Anyone can look with /settings.";

/**
 * Starts the fakes and Redis with no roles, then bots + worker roles on the harness's Redis prefix
 * (the adapter's start registers the application commands); `restartRoles` stops every role and
 * starts it again on the same deployment.
 */
async function start(
  { startDiscord, startStack }: Pick<E2EFixtures, "startDiscord" | "startStack">,
  env: Record<string, string> = {},
): Promise<DiscordE2E & { restartRoles(): Promise<void> }> {
  const e2e = await startDiscord({
    roles: [],
    model: { models: MODELS },
    env,
    discord: { messageWriteLimit: { limit: 5, windowMs: 500 } },
  });
  let roles = await startStack({ env: e2e.stack.env, redis: e2e.stack.redis });
  return {
    ...e2e,
    async restartRoles() {
      await roles.close();
      roles = await startStack({ env: e2e.stack.env, redis: e2e.stack.redis });
    },
  };
}

/** The bot's final answer (buttons gone) to a message. */
function answerTo(discord: FakeDiscord, channelId: string, asked: APIMessage, content: string): Promise<APIMessage> {
  return discord.waitFor(
    () =>
      discord
        .botMessages(channelId)
        .find(
          (m) =>
            m.message_reference?.message_id === asked.id && m.content === content && (m.components ?? []).length === 0,
        ),
    { timeoutMs: 8000, label: `the answer to "${asked.content}"` },
  );
}

/** Runs a slash command and waits for the bot's response to it. */
async function slash(
  discord: FakeDiscord,
  channelId: string,
  user: APIUser,
  name: string,
  options: { name: string; value: string }[] = [],
) {
  const { id } = discord.runCommand({ channelId, name, user, options });
  return discord.waitFor(() => discord.interactionResponses.find((r) => r.interactionId === id), {
    label: `the response to /${name}`,
  });
}

const buttonsOf = (message: APIMessage | undefined) =>
  (message?.components ?? []).flatMap((row) =>
    "components" in row ? (row.components as { label?: string; custom_id?: string }[]) : [],
  );

describe("Discord per-conversation settings, end to end", () => {
  e2eTest(
    "in a server channel a member is refused and nothing changes; a moderator's slash commands, text command and buttons reach the next request",
    async ({ startDiscord, startStack }) => {
      const { discord, model } = await start({ startDiscord, startStack }, { ENABLE_THINKING: "false" });
      model.setHandler(() => textAnswer("Hello there."));
      const channelId = discord.ids.general;
      const { alice, bob } = discord.users;

      // Alice (no Manage Server / Manage Channels) may look but not switch; only she sees the refusal.
      const refused = await slash(discord, channelId, alice, "model", [{ name: "name", value: "qwen3-4b" }]);
      expect(refused).toMatchObject({ type: 4, ephemeral: true, data: expect.objectContaining({ content: REFUSAL }) });
      const asked = discord.userSays({ channelId, author: alice, content: "hello", mentionsBot: true });
      await answerTo(discord, channelId, asked, "Hello there.");
      expect(settingsCarriedBy(model.requests[0])).toMatchObject({
        model: "qwen3-1.7b",
        thinking: false,
        tools: [
          "cancel_schedule",
          "get_news",
          "get_time",
          "get_weather",
          "list_schedules",
          "read_url",
          "schedule_message",
        ],
      });

      // Typing the model's name suggests the matching choices the server lists.
      const { id: typing } = discord.autocomplete({ channelId, name: "model", option: "name", typed: "4B", user: bob });
      const suggestions = await discord.waitFor(
        () => discord.interactionResponses.find((r) => r.interactionId === typing),
        { label: "the suggestions" },
      );
      expect(suggestions).toMatchObject({ type: 8, data: { choices: [{ name: "qwen3-4b", value: "qwen3-4b" }] } });

      // Bob is a moderator: his choices are shown to the channel.
      const switched = await slash(discord, channelId, bob, "model", [{ name: "name", value: "qwen3-4b" }]);
      expect(switched).toMatchObject({ type: 4, ephemeral: false });
      expect(String(switched.data?.content)).toContain(
        "✅ Model here is now qwen3-4b. It applies from the next answer.",
      );
      const think = discord.userSays({ channelId, author: bob, content: "/think on", mentionsBot: true });
      const thinkReply = await discord.waitFor(
        () => discord.botMessages(channelId).find((m) => m.message_reference?.message_id === think.id),
        { label: "the /think reply" },
      );
      expect(thinkReply.content).toContain("✅ Thinking is now on here.");
      expect(
        String(
          (await slash(discord, channelId, bob, "persona", [{ name: "text", value: "Answer in haiku." }])).data
            ?.content,
        ),
      ).toContain("✅ Persona set.");

      // /tools answers with a toggle per tool; Alice's press is refused, Bob's turns get_weather off in place.
      await slash(discord, channelId, bob, "tools");
      const list = await discord.waitFor(
        () => discord.botMessages(channelId).find((m) => m.content.includes("Tools here")),
        { label: "the tool list" },
      );
      expect(buttonsOf(list).map((b) => b.custom_id)).toEqual([
        "cfg:tools off get_weather",
        "cfg:tools off get_news",
        "cfg:tools off get_time",
        "cfg:tools off read_url",
        "cfg:tools off schedule_message",
        "cfg:tools off list_schedules",
        "cfg:tools off cancel_schedule",
      ]);
      const { id: alicePress } = discord.clickButton({
        channelId,
        messageId: list.id,
        customId: "cfg:tools off get_weather",
        user: alice,
      });
      expect(
        await discord.waitFor(() => discord.interactionResponses.find((r) => r.interactionId === alicePress)),
      ).toMatchObject({
        type: 4,
        ephemeral: true,
        data: expect.objectContaining({ content: REFUSAL }),
      });
      const { id: bobPress } = discord.clickButton({
        channelId,
        messageId: list.id,
        customId: "cfg:tools off get_weather",
        user: bob,
      });
      expect(
        await discord.waitFor(() => discord.interactionResponses.find((r) => r.interactionId === bobPress)),
      ).toMatchObject({ type: 7 });
      const toggled = discord.botMessages(channelId).find((m) => m.id === list.id);
      expect(toggled?.content).toContain("⛔ get_weather");
      expect(buttonsOf(toggled)[0]).toMatchObject({ label: "⛔ get_weather", custom_id: "cfg:tools on get_weather" });

      const again = discord.userSays({ channelId, author: alice, content: "hello again", mentionsBot: true });
      await answerTo(discord, channelId, again, "Hello there.");
      const after = settingsCarriedBy(model.requests[1]);
      expect(after).toMatchObject({
        model: "qwen3-4b",
        thinking: true,
        tools: ["cancel_schedule", "get_news", "get_time", "list_schedules", "read_url", "schedule_message"],
      });
      expect(after.system).toContain("Your persona in this chat (the rules above still apply): Answer in haiku.");
      expect(discord.violations).toEqual([]);
    },
    60_000,
  );

  e2eTest(
    "in a DM the user decides alone, the channel's settings stay its own, and a DM's survive a restart of every role",
    async ({ startDiscord, startStack }) => {
      const { discord, model, restartRoles } = await start({ startDiscord, startStack });
      model.setHandler(() => textAnswer("Sure."));
      const dm = discord.ids.dm;
      const { alice } = discord.users;

      const switched = discord.userSays({ channelId: dm, author: alice, content: "/model qwen3-8b" });
      const reply = await discord.waitFor(
        () => discord.botMessages(dm).find((m) => m.message_reference?.message_id === switched.id),
        { label: "the /model reply" },
      );
      expect(reply.content).toContain("✅ Model here is now qwen3-8b.");
      // The reply's buttons choose a model too, the current one marked.
      expect(buttonsOf(reply).map((b) => b.label)).toEqual(["qwen3-1.7b", "qwen3-4b", "• qwen3-8b"]);

      await restartRoles();
      const asked = discord.userSays({ channelId: dm, author: alice, content: "which model are you?" });
      await answerTo(discord, dm, asked, "Sure.");
      expect(settingsCarriedBy(model.requests[0]).model).toBe("qwen3-8b");

      const inChannel = discord.userSays({
        channelId: discord.ids.general,
        author: alice,
        content: "and here?",
        mentionsBot: true,
      });
      await answerTo(discord, discord.ids.general, inChannel, "Sure.");
      expect(settingsCarriedBy(model.requests[1]).model).toBe("qwen3-1.7b");

      const overview = await slash(discord, dm, alice, "settings");
      expect(String(overview.data?.content)).toContain("• Model: qwen3-8b\n");
      expect(String(overview.data?.content)).not.toContain("only admins");
    },
    60_000,
  );

  e2eTest(
    "a change made while an answer is being written applies from the next answer, not to the rest of that one",
    async ({ startDiscord, startStack }) => {
      const { discord, model } = await start({ startDiscord, startStack });
      const channelId = discord.ids.general;
      const { alice, bob } = discord.users;
      model.setHandler(async (request) => {
        if (request.index !== 0) return textAnswer("It is noon.");
        // While the first round is being answered, a moderator switches the model.
        const response = await slash(discord, channelId, bob, "model", [{ name: "name", value: "qwen3-8b" }]);
        expect(String(response.data?.content)).toContain("✅ Model here is now qwen3-8b.");
        return toolCallAnswer([{ name: "get_time", arguments: {} }]);
      });
      const finalTo = (asked: APIMessage) =>
        discord.waitFor(
          () =>
            discord
              .botMessages(channelId)
              .find(
                (m) =>
                  m.message_reference?.message_id === asked.id &&
                  m.content.endsWith("It is noon.") &&
                  (m.components ?? []).length === 0,
              ),
          { timeoutMs: 8000, label: `the answer to "${asked.content}"` },
        );

      await finalTo(discord.userSays({ channelId, author: alice, content: "what time is it?", mentionsBot: true }));
      // Both rounds of that answer ran on the model it started with.
      expect(model.requests.map((r) => r.body.model)).toEqual(["qwen3-1.7b", "qwen3-1.7b"]);
      await finalTo(discord.userSays({ channelId, author: alice, content: "and now?", mentionsBot: true }));
      expect(model.requests[2]?.body.model).toBe("qwen3-8b");
    },
    60_000,
  );
});
