/**
 * Status reactions (STATUS_REACTIONS=on) on the user's Discord message: 👀 when queued, 🔧 while
 * tools run, ✅ when answered, ⚠️ when the model is down for good, each replacing the one before,
 * and none of the reaction requests refused for its rate limit (429).
 */
import { describe, expect } from "vitest";
import { serverError, textAnswer, toolCallAnswer } from "../fakes/openai-server.js";
import { FAST_QUEUE } from "../support/fault-kit.js";
import { startStack } from "../support/stack.js";
import { e2eTest } from "../support/fixtures.js";
import { botAnswer } from "./discord-harness.js";

const quick = { messageWriteLimit: { limit: 5, windowMs: 500 } };
const on = { STATUS_REACTIONS: "on" };

describe("Discord status reactions", () => {
  e2eTest("a tool-using answer goes 👀 → 🔧 → ✅ on the question, without a 429", async ({ startDiscord }) => {
    const { discord, model } = await startDiscord({ discord: quick, env: on });
    model.script([
      toolCallAnswer([{ name: "get_weather", arguments: { city: "Beijing" } }]),
      textAnswer("Sunny in Beijing."),
    ]);
    const { general } = discord.ids;
    const asked = discord.userSays({ channelId: general, content: "weather in Beijing?", mentionsBot: true });
    await botAnswer(discord, general, (c) => c.includes("Sunny in Beijing."));
    await expect.poll(() => discord.botReactions(asked.id), { timeout: 10_000 }).toEqual(["✅"]);
    const added = discord.reactionLog.filter((r) => r.messageId === asked.id && r.op === "add").map((r) => r.emoji);
    expect(added).toEqual(["👀", "🔧", "✅"]);
    expect(discord.requests.filter((r) => r.route.includes("reactions") && r.status === 429)).toEqual([]);
  });

  e2eTest("the model down for good: 👀 → ⚠️", { timeout: 60_000 }, async ({ startDiscord }) => {
    const e2e = await startDiscord({ discord: quick, env: on, roles: ["bots"] });
    const { discord, model } = e2e;
    model.script([serverError(), serverError(), serverError()]);
    const worker = await startStack({
      env: e2e.stack.env,
      roles: ["worker"],
      redis: e2e.stack.redis,
      worker: { queue: FAST_QUEUE },
    });
    try {
      const { general } = discord.ids;
      const asked = discord.userSays({ channelId: general, content: "hello?", mentionsBot: true });
      await expect.poll(() => discord.botReactions(asked.id), { timeout: 50_000 }).toEqual(["⚠️"]);
      const added = discord.reactionLog.filter((r) => r.messageId === asked.id && r.op === "add").map((r) => r.emoji);
      expect(added).toEqual(["👀", "⚠️"]);
    } finally {
      await worker.close();
    }
  });

  e2eTest("off by default: no reaction at all", async ({ startDiscord }) => {
    const { discord, model } = await startDiscord({ discord: quick });
    model.script([textAnswer("Plain.")]);
    discord.userSays({ channelId: discord.ids.general, content: "hi", mentionsBot: true });
    await botAnswer(discord, discord.ids.general, (c) => c === "Plain.");
    expect(discord.reactionLog).toEqual([]);
  });
});
