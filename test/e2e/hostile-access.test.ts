/**
 * Access control through the real stack: TELEGRAM_ALLOWED_CHATS /
 * TELEGRAM_ALLOWED_USERS and DISCORD_ALLOWED_GUILDS / DISCORD_ALLOWED_CHANNELS.
 * Outsiders write first; insiders write after them. Once the insiders' answers are
 * visible (and Telegram's offset shows every update handled), outsiders must have got
 * no answer and the model must have been asked only the insiders' questions.
 */
import { describe, expect } from "vitest";
import { privateChat, type FakeChat } from "../fakes/telegram-server.js";
import { createDefaultWorld } from "../fakes/discord-fixtures.js";
import { echoingModel, lastUserTurn, startHostileRig } from "../security/hostile-kit.js";
import { e2eTest } from "../support/fixtures.js";

describe("Telegram allow lists", () => {
  e2eTest("answers only allowed users in allowed chats; outsiders reach no model", async ({ closeAfter }) => {
    const team: FakeChat = { id: -1001200, type: "supergroup", title: "Team" };
    const elsewhere: FakeChat = { id: -1001300, type: "supergroup", title: "Elsewhere" };
    const alice = { id: 1001, first_name: "Alice" };
    const bob = { id: 1002, first_name: "Bob" };
    const mallory = { id: 6666, first_name: "Mallory" };
    const rig = closeAfter(
      await startHostileRig({
        platform: "telegram",
        env: { TELEGRAM_ALLOWED_CHATS: `${team.id},${alice.id}`, TELEGRAM_ALLOWED_USERS: `${alice.id},${bob.id}` },
      }),
    );
    const { tg, model } = { tg: rig.tg!, model: rig.model };
    echoingModel(model);

    // Outsiders first: a stranger in private, a stranger in an allowed group, an insider in a group not on the list,
    // and bob in private (bob is an allowed user, but his private chat is not an allowed chat).
    tg.userSays(privateChat(mallory), mallory, "OUTSIDER private: tell me a secret");
    tg.userSays(team, mallory, "@test_bot OUTSIDER in the team group");
    tg.userSays(elsewhere, alice, "@test_bot OUTSIDER group not on the list");
    tg.userSays(privateChat(bob), bob, "OUTSIDER bob in private");
    const outsiderUpdates = tg.pendingUpdateIds();
    // Then the insiders.
    tg.userSays(team, bob, "@test_bot INSIDER bob in the team");
    tg.userSays(privateChat(alice), alice, "INSIDER alice in private");

    await tg.waitFor(() => tg.visibleText(team.id).includes("answer to: Bob: INSIDER bob in the team"), {
      timeoutMs: 12_000,
      what: "bob's answer",
    });
    await tg.waitFor(() => tg.visibleText(alice.id).includes("answer to: INSIDER alice in private"), {
      timeoutMs: 12_000,
      what: "alice's answer",
    });
    await tg.waitFor(() => !tg.pendingUpdateIds().some((id) => outsiderUpdates.includes(id)), {
      what: "every outsider update handled",
    });

    // The model was asked exactly the insiders' questions.
    expect(model.requests.map(lastUserTurn).sort()).toEqual([
      "Bob: INSIDER bob in the team",
      "INSIDER alice in private",
    ]);
    // Strangers in private chats are told once that the bot is private; groups stay silent.
    expect(tg.botMessages(mallory.id).map((m) => m.text)).toEqual([
      "Sorry, this bot is private and not available to you.",
    ]);
    expect(tg.botMessages(bob.id).map((m) => m.text)).toEqual(["Sorry, this bot is private and not available to you."]);
    expect(tg.botMessages(elsewhere.id)).toEqual([]);
    expect(tg.botMessages(team.id).map((m) => m.text)).toEqual(["answer to: Bob: INSIDER bob in the team"]);
    expect(tg.floodViolations()).toEqual([]);
  });
});

describe("Discord allow lists", () => {
  // The fake serves this world (fixed ids), so the allow lists can name its guild and channels.
  const world = createDefaultWorld();
  e2eTest(
    "DISCORD_ALLOWED_CHANNELS: other channels and DMs get nothing; a thread of an allowed channel is answered",
    async ({ closeAfter }) => {
      const rig = closeAfter(
        await startHostileRig({ platform: "discord", env: { DISCORD_ALLOWED_CHANNELS: world.channels.general.id } }),
      );
      const { discord, model } = { discord: rig.discord!, model: rig.model };
      echoingModel(model);
      const { general, random, dm, thread } = discord.ids;

      discord.userSays({ channelId: random, content: "OUTSIDER in #random", mentionsBot: true });
      discord.userSays({ channelId: dm, content: "OUTSIDER in a DM" });
      discord.userSays({ channelId: thread, content: "INSIDER in a thread of #general", mentionsBot: true });
      discord.userSays({ channelId: general, content: "INSIDER in #general", mentionsBot: true });

      await discord.waitFor(
        () => discord.botMessages(general).some((m) => m.content.includes("answer to: Alice: INSIDER in #general")),
        { timeoutMs: 12_000 },
      );
      await discord.waitFor(() => discord.botMessages(thread).some((m) => m.content.includes("INSIDER in a thread")), {
        timeoutMs: 12_000,
      });
      expect(model.requests.map(lastUserTurn).sort()).toEqual([
        "Alice: INSIDER in #general",
        "Alice: INSIDER in a thread of #general",
      ]);
      expect(discord.botMessages(random)).toEqual([]);
      expect(discord.botMessages(dm)).toEqual([]);
      // Not even a typing indicator betrays the bot to outsiders.
      expect(discord.typing.filter((t) => t.channelId === random || t.channelId === dm)).toEqual([]);
    },
  );

  e2eTest(
    "DISCORD_ALLOWED_GUILDS: the guild is served, DMs (which belong to no guild) are not",
    async ({ closeAfter }) => {
      const rig = closeAfter(
        await startHostileRig({ platform: "discord", env: { DISCORD_ALLOWED_GUILDS: world.guildId } }),
      );
      const { discord, model } = { discord: rig.discord!, model: rig.model };
      echoingModel(model);

      discord.userSays({ channelId: discord.ids.dm, content: "OUTSIDER in a DM" });
      discord.userSays({ channelId: discord.ids.random, content: "INSIDER in #random", mentionsBot: true });
      await discord.waitFor(
        () =>
          discord
            .botMessages(discord.ids.random)
            .some((m) => m.content.includes("answer to: Alice: INSIDER in #random")),
        {
          timeoutMs: 12_000,
        },
      );
      expect(model.requests.map(lastUserTurn)).toEqual(["Alice: INSIDER in #random"]);
      expect(discord.botMessages(discord.ids.dm)).toEqual([]);
    },
  );
});
