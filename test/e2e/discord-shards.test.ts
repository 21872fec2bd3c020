/**
 * Discord sharding end to end: two `bots` processes split 4 shards (0-1 and 2-3) against a fake
 * gateway that enforces sharding like Discord (events routed by `(guild_id >> 22) % shards`, DMs
 * on shard 0, identifies paced by max_concurrency, 4011 for too many guilds unsharded). Each
 * message is answered exactly once; commands are registered once; a process restarted loses nothing.
 */
import { describe, expect } from "vitest";
import { textAnswer } from "../fakes/openai-server.js";
import { shardOf } from "../fakes/discord/gateway.js";
import { startStack, type Stack } from "../support/stack.js";
import { botAnswer } from "./discord-harness.js";
import { e2eTest } from "../support/fixtures.js";

const quick = { messageWriteLimit: { limit: 5, windowMs: 500 } };

describe("Discord shards across processes", () => {
  e2eTest(
    "two processes with shards 0-1 and 2-3 of 4 answer a guild message and a DM once each, and register commands once",
    async ({ startDiscord }) => {
      const e2e = await startDiscord({
        roles: ["worker"],
        discord: { ...quick, sharding: { recommendedShards: 4, maxConcurrency: 4 } },
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

        model.script([textAnswer("Guild answer."), textAnswer("DM answer.")]);
        const { general, dm } = discord.ids;
        discord.userSays({ channelId: general, content: "hello guild", mentionsBot: true });
        await botAnswer(discord, general, (c) => c === "Guild answer.");
        discord.userSays({ channelId: dm, content: "hello dm" });
        await botAnswer(discord, dm, (c) => c === "DM answer.");
        expect(discord.botMessages(general)).toHaveLength(1);
        expect(discord.botMessages(dm)).toHaveLength(1);
        expect(model.requests).toHaveLength(2);

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
