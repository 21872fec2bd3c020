/**
 * Discord sharding end to end: two `bots` processes split 4 shards (0-1 and 2-3) against a fake
 * gateway that enforces sharding like Discord (events routed by `(guild_id >> 22) % shards`, DMs
 * on shard 0, identifies paced by max_concurrency, 4011 for too many guilds unsharded). Each
 * message is answered exactly once; commands are registered once; a process restarted loses nothing.
 */
import { describe, expect } from "vitest";
import { textAnswer } from "../fakes/openai-server.js";
import { shardOf } from "../fakes/discord/gateway.js";
import type { FakeDiscord } from "../fakes/discord-server.js";
import { startStack, type Stack } from "../support/stack.js";
import { botAnswer } from "./discord-harness.js";
import { e2eTest } from "../support/fixtures.js";

const quick = { messageWriteLimit: { limit: 5, windowMs: 500 } };

/** The #general of one guild per shard (of 4), from the main guild and the fake's other guilds. */
function guildChannelsByShard(discord: FakeDiscord): Map<number, string> {
  const guilds = [{ guild: discord.ids.guild, general: discord.ids.general }, ...discord.ids.otherGuilds];
  return new Map(guilds.map((g) => [shardOf(g.guild, 4), g.general]));
}

describe("Discord shards across processes", () => {
  e2eTest(
    "two processes with shards 0-1 and 2-3 of 4 answer guilds on all four shards and a DM once each, and register commands once",
    async ({ startDiscord }) => {
      const e2e = await startDiscord({
        roles: ["worker"],
        discord: { ...quick, otherGuilds: 3, sharding: { recommendedShards: 4, maxConcurrency: 4 } },
      });
      const { discord, model } = e2e;
      const stacks: Stack[] = [];
      try {
        for (const ids of ["0-1", "2-3"]) {
          stacks.push(
            await startStack({
              env: { ...e2e.stack.env, DISCORD_SHARD_COUNT: "auto", DISCORD_SHARD_IDS: ids },
              roles: ["bots"],
              redis: e2e.stack.redis,
            }),
          );
        }
        expect(discord.gateway.sessions.map((s) => s.shard).sort()).toEqual([
          [0, 4],
          [1, 4],
          [2, 4],
          [3, 4],
        ]);
        expect(discord.gateway.stats.identifyPaceViolations).toBe(0);
        // Only the process holding shard 0 looked at the commands, and registered them once.
        expect(discord.requests.filter((r) => r.route === "PUT /applications/:id/commands")).toHaveLength(1);

        const channels = guildChannelsByShard(discord);
        expect([...channels.keys()].sort()).toEqual([0, 1, 2, 3]);
        const asked = [
          ...[...channels.entries()].map(([shard, channelId]) => ({ shard, channelId })),
          {
            shard: 0,
            channelId: discord.ids.dm,
          },
        ];
        for (const [i, { channelId }] of asked.entries()) {
          model.script([textAnswer(`Answer ${i}.`)]);
          discord.userSays({ channelId, content: `question ${i}`, mentionsBot: channelId !== discord.ids.dm });
          await botAnswer(discord, channelId, (c) => c === `Answer ${i}.`);
        }
        for (const { channelId } of asked) expect(discord.botMessages(channelId)).toHaveLength(1);
        expect(model.requests).toHaveLength(asked.length);

        // /healthz's view: every shard of each process is ready.
        for (const stack of stacks) {
          const checks = stack.bots?.healthChecks ?? [];
          expect(checks).toHaveLength(2);
          await Promise.all(checks.map((c) => c.check()));
        }
      } finally {
        await Promise.allSettled(stacks.map((s) => s.close()));
      }
    },
  );

  e2eTest(
    "the process of shards 2-3 is killed and started again: what it took before dying is answered once, the rest carries on",
    { timeout: 90_000 },
    async ({ startDiscord, startStack: startRoles, spawnRole }) => {
      const e2e = await startDiscord({
        roles: ["worker"],
        discord: { ...quick, otherGuilds: 3, sharding: { recommendedShards: 4, maxConcurrency: 4 } },
      });
      const { discord, model } = e2e;
      const env = { ...e2e.stack.env, DISCORD_SHARD_COUNT: "4" };
      await startRoles({ env: { ...env, DISCORD_SHARD_IDS: "0-1" }, roles: ["bots"], redis: e2e.stack.redis });
      // A real process, so that it can die without a goodbye (SIGKILL).
      const b = await spawnRole("bots", { ...env, DISCORD_SHARD_IDS: "2-3" });
      const channels = guildChannelsByShard(discord);
      const [c0, c1, c2, c3] = [0, 1, 2, 3].map((shard) => channels.get(shard)!);

      model.script([textAnswer("Before the kill."), textAnswer("Before the kill.")]);
      discord.userSays({ channelId: c2!, content: "first on shard 2", mentionsBot: true });
      discord.userSays({ channelId: c3!, content: "first on shard 3", mentionsBot: true });
      // Both taken into the queue (the worker asked the model), then the process dies.
      await expect.poll(() => model.requests.length, { timeout: 10_000 }).toBe(2);
      b.kill("SIGKILL");
      await b.exited;

      // The other process carries on meanwhile.
      model.script([textAnswer("Shard 0 answer."), textAnswer("Shard 1 answer.")]);
      discord.userSays({ channelId: c0!, content: "on shard 0", mentionsBot: true });
      await botAnswer(discord, c0!, (c) => c === "Shard 0 answer.");
      discord.userSays({ channelId: c1!, content: "on shard 1", mentionsBot: true });
      await botAnswer(discord, c1!, (c) => c === "Shard 1 answer.");

      await spawnRole("bots", { ...env, DISCORD_SHARD_IDS: "2-3" });
      await botAnswer(discord, c2!, (c) => c === "Before the kill.");
      await botAnswer(discord, c3!, (c) => c === "Before the kill.");
      model.script([textAnswer("After the restart."), textAnswer("After the restart.")]);
      discord.userSays({ channelId: c2!, content: "second on shard 2", mentionsBot: true });
      await botAnswer(discord, c2!, (c) => c === "After the restart.");
      discord.userSays({ channelId: c3!, content: "second on shard 3", mentionsBot: true });
      await botAnswer(discord, c3!, (c) => c === "After the restart.");

      expect(discord.botMessages(c0!).map((m) => m.content)).toEqual(["Shard 0 answer."]);
      expect(discord.botMessages(c1!).map((m) => m.content)).toEqual(["Shard 1 answer."]);
      expect(discord.botMessages(c2!).map((m) => m.content)).toEqual(["Before the kill.", "After the restart."]);
      expect(discord.botMessages(c3!).map((m) => m.content)).toEqual(["Before the kill.", "After the restart."]);
      expect(model.requests).toHaveLength(6);
      // The restarted process found its commands registered by the holder of shard 0: no PUT of its own.
      expect(discord.requests.filter((r) => r.route === "PUT /applications/:id/commands")).toHaveLength(1);
    },
  );

  e2eTest(
    "the process of a guild's shard is restarted: the message it enqueued before dying is answered once",
    async ({ startDiscord }) => {
      const e2e = await startDiscord({
        roles: ["worker"],
        discord: { ...quick, sharding: { recommendedShards: 4, maxConcurrency: 4 } },
      });
      const { discord, model } = e2e;
      const guildShard = shardOf(discord.ids.guild, 4);
      const env = { ...e2e.stack.env, DISCORD_SHARD_COUNT: "4", DISCORD_SHARD_IDS: `0,${guildShard}` };
      let stack = await startStack({ env, roles: ["bots"], redis: e2e.stack.redis });
      try {
        model.script([textAnswer("Answer one."), textAnswer("Answer two.")]);
        const { general } = discord.ids;
        discord.userSays({ channelId: general, content: "first question", mentionsBot: true });
        await expect.poll(() => model.requests.length).toBe(1);
        await stack.close();
        stack = await startStack({ env, roles: ["bots"], redis: e2e.stack.redis });
        await botAnswer(discord, general, (c) => c === "Answer one.");
        discord.userSays({ channelId: general, content: "second question", mentionsBot: true });
        await botAnswer(discord, general, (c) => c === "Answer two.");
        expect(discord.botMessages(general).map((m) => m.content)).toEqual(["Answer one.", "Answer two."]);
        expect(model.requests).toHaveLength(2);
        // The restarted process found its commands registered (GET) and did not PUT them again.
        expect(discord.requests.filter((r) => r.route === "PUT /applications/:id/commands")).toHaveLength(1);
      } finally {
        await stack.close();
      }
    },
  );

  e2eTest("one process's two shards identify no faster than max_concurrency (1 per 5 s)", async ({ startDiscord }) => {
    const e2e = await startDiscord({
      discord: { sharding: { recommendedShards: 2, maxConcurrency: 1 } },
      env: { DISCORD_SHARD_COUNT: "auto" },
    });
    expect(e2e.discord.gateway.sessions.map((s) => s.shard)).toEqual([
      [0, 2],
      [1, 2],
    ]);
    expect(e2e.discord.gateway.stats.identifyPaceViolations).toBe(0);
  });

  e2eTest(
    "an unsharded session holding too many guilds is closed with 4011 and the bot does not start",
    async ({ startDiscord }) => {
      const e2e = await startDiscord({ roles: ["worker"], discord: { sharding: { maxGuildsPerSession: 0 } } });
      await expect(startStack({ env: e2e.stack.env, roles: ["bots"], redis: e2e.stack.redis })).rejects.toThrow();
      expect(e2e.discord.gateway.stats.closesSent).toContain(4011);
    },
  );
});
