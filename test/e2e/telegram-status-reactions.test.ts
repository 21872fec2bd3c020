/**
 * Status reactions on Telegram (STATUS_REACTIONS=on) with setMessageReaction: 👀 when queued, 👨‍💻
 * while tools run, 👌 when answered, 😢 when the model is down for good, each replacing the one
 * before (Telegram's allowed reactions: the fake refuses ✅, 🔧 and ⚠️ with REACTION_INVALID, as the
 * real server does). Reactions are not messages: no flood limit is touched by them.
 */
import { describe, expect } from "vitest";
import { privateChat, type FakeUser } from "../fakes/telegram-server.js";
import { serverError, textAnswer, toolCallAnswer } from "../fakes/openai-server.js";
import { FAST_QUEUE } from "../support/fault-kit.js";
import { e2eTest } from "../support/fixtures.js";
import { expectNoFlood } from "./telegram-harness.js";

const on = { STATUS_REACTIONS: "on" };
const alice: FakeUser = { id: 1001, first_name: "Alice" };
const chat = privateChat(alice);

describe("Telegram status reactions", () => {
  e2eTest("a tool-using answer goes 👀 → 👨‍💻 → 👌 on the question", async ({ startTelegram }) => {
    const { tg, model } = await startTelegram({ env: on });
    model.script([
      toolCallAnswer([{ name: "get_weather", arguments: { city: "Beijing" } }]),
      textAnswer("Sunny in Beijing."),
    ]);
    const { message } = tg.userSays(chat, alice, "weather in Beijing?");
    const asked = Number(message.message_id);
    await tg.waitFor(() => tg.visibleText(alice.id).includes("Sunny in Beijing."), { what: "the answer" });
    await expect.poll(() => tg.botReactions(alice.id, asked), { timeout: 10_000 }).toEqual(["👌"]);
    expect(tg.reactionLog().map((r) => r.emoji)).toEqual([["👀"], ["👨‍💻"], ["👌"]]);
    expect(tg.calls("setMessageReaction").filter((c) => !c.ok)).toEqual([]);
    expectNoFlood(tg);
  });

  e2eTest("the model down for good: 👀 → 😢", { timeout: 60_000 }, async ({ startTelegram, startStack }) => {
    const e2e = await startTelegram({ env: on, roles: ["bots"] });
    const { tg, model } = e2e;
    model.script([serverError(), serverError(), serverError()]);
    await startStack({ env: e2e.env, roles: ["worker"], redis: e2e.stack.redis, worker: { queue: FAST_QUEUE } });
    const { message } = tg.userSays(chat, alice, "hello?");
    const asked = Number(message.message_id);
    await expect.poll(() => tg.botReactions(alice.id, asked), { timeout: 50_000 }).toEqual(["😢"]);
    expect(tg.reactionLog().map((r) => r.emoji)).toEqual([["👀"], ["😢"]]);
  });

  e2eTest("off by default: no reaction at all", async ({ startTelegram }) => {
    const { tg, model } = await startTelegram();
    model.script([textAnswer("Plain.")]);
    tg.userSays(chat, alice, "hi");
    await tg.waitFor(() => tg.visibleText(alice.id).includes("Plain."), { what: "the answer" });
    expect(tg.calls("setMessageReaction")).toEqual([]);
  });
});
