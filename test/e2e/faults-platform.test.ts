/**
 * Platform faults: 429 storms and 5xx answers on the requests that put an answer
 * into a chat (Telegram sendMessageDraft / sendMessage / editMessageText, Discord POST /
 * PATCH of channel messages). The whole bot runs in this process against the fakes. Each
 * test checks what the user ends with (the final text, in one message) and how the bot
 * behaved towards the platform: after a 429 nothing reached that chat before retry_after.
 */
import { describe, it, type TestContext } from "vitest";
import {
  privateChat,
  startFakeTelegram,
  type FakeChat,
  type FakeTelegram,
  type FakeUser,
} from "../fakes/telegram-server.js";
import { startFakeDiscord, type FakeDiscord } from "../fakes/discord-server.js";
import { paced, startFakeOpenAI, textAnswer, type FakeOpenAI } from "../fakes/openai-server.js";
import { startStack, type Stack } from "../support/stack.js";
import { FAST_QUEUE, jobCount, waitUntil } from "../support/fault-kit.js";

const ANSWER =
  "Bread rises because yeast eats the sugars in the dough and breathes out carbon dioxide, which the gluten traps.";
const alice: FakeUser = { id: 2001, first_name: "Alice" };
const WRITES = new Set(["sendmessage", "editmessagetext", "sendmessagedraft"]);

/**
 * Starts the bot against `env` and a model that writes ANSWER at `tokensPerSecond` (6: ~3.7 s, long
 * enough for the injected failures to meet streaming requests, not only the final one). Closes all at the end.
 */
async function bot(
  ctx: TestContext,
  env: Record<string, string>,
  closeFake: () => Promise<void>,
  tokensPerSecond = 6,
): Promise<{ model: FakeOpenAI; stack: Stack }> {
  const model = await startFakeOpenAI(() => paced(textAnswer(ANSWER), tokensPerSecond));
  let stack: Stack | undefined;
  ctx.onTestFinished(async () => {
    await stack?.close();
    await closeFake();
    await model.close();
  });
  stack = await startStack({ env: { OPENAI_BASE_URL: model.url, ...env }, worker: { queue: FAST_QUEUE } });
  return { model, stack };
}

/** Telegram writes into `chatId` that arrived earlier than a 429 for that chat allowed (should be none). */
function telegramRetryAfterBreaches(tg: FakeTelegram, chatId: number): string[] {
  const mine = (params: Record<string, unknown>) => String(params.chat_id) === String(chatId);
  const limited = tg.calls().filter((c) => c.status === 429 && WRITES.has(c.method.toLowerCase()) && mine(c.params));
  const arrivals = tg.requests().filter((r) => WRITES.has(r.method.toLowerCase()) && mine(r.params));
  const breaches: string[] = [];
  for (const c of limited) {
    const until = c.at + retryAfterOf(c.description) * 1000;
    for (const r of arrivals)
      if (r.at > c.at && r.at < until)
        breaches.push(`${r.method} at +${r.at - c.at} ms after a 429 (${c.description})`);
  }
  return breaches;
}

const retryAfterOf = (description: string | undefined) => Number(/retry after (\d+)/.exec(description ?? "")?.[1] ?? 0);

async function telegramWorld(ctx: TestContext, tokensPerSecond?: number) {
  const tg = await startFakeTelegram();
  const { model, stack } = await bot(
    ctx,
    { TELEGRAM_BOT_TOKEN: tg.token, TELEGRAM_API_ROOT: tg.apiRoot },
    () => tg.close(),
    tokensPerSecond,
  );
  return { tg, model, stack };
}

describe.concurrent("platform faults: waited out, and the final text lands", () => {
  it("Telegram private chat: a 429 storm on drafts and on the final send", async (ctx) => {
    const { expect } = ctx;
    // retry_after (2 s) longer than the chat's own pacing (1.1 s), so only honouring it keeps requests away.
    const { tg, stack } = await telegramWorld(ctx, 20);
    tg.failNext("sendMessageDraft", 1, { retryAfter: 2 });
    tg.failNext("sendMessage", 2, { retryAfter: 2 });
    const asked = tg.userSays(privateChat(alice), alice, "Why does bread rise?").message.message_id;

    await tg.waitFor(() => tg.botMessages(alice.id).some((m) => m.text === ANSWER), {
      timeoutMs: 12_000,
      what: "the answer",
    });
    await waitUntil("the job to finish", async () => (await jobCount(stack.metrics, "done")) >= 1);
    const shown = tg.botMessages(alice.id);
    expect(shown.map((m) => m.text)).toEqual([ANSWER]);
    expect(shown[0]!.replyToMessageId).toBe(asked);
    expect(tg.calls().filter((c) => c.status === 429)).toHaveLength(3); // every injected 429 was met…
    expect(telegramRetryAfterBreaches(tg, alice.id)).toEqual([]); // …and waited out
    expect(tg.floodViolations()).toEqual([]);
    expect(await jobCount(stack.metrics, "retried")).toBe(0); // the reply engine absorbed it; no model re-run
  });

  it("Telegram group: 5xx on send (an nginx HTML page) and on edit (JSON)", async (ctx) => {
    const { expect } = ctx;
    const { tg, model, stack } = await telegramWorld(ctx);
    const group: FakeChat = { id: -100200, type: "group", title: "Bakers" };
    tg.failNext("sendMessage", 1, { status: 502, html: true });
    tg.failNext("editMessageText", 1, { status: 500 });
    const asked = tg.userSays(group, alice, `@${tg.me.username} why does bread rise?`).message.message_id;

    await tg.waitFor(() => tg.botMessages(group.id).some((m) => m.text === ANSWER), {
      timeoutMs: 15_000,
      what: "the answer",
    });
    await waitUntil("the job to finish", async () => (await jobCount(stack.metrics, "done")) >= 1);
    const shown = tg.botMessages(group.id);
    expect(shown.map((m) => m.text)).toEqual([ANSWER]);
    expect(shown[0]!.replyToMessageId).toBe(asked);
    expect(shown[0]!.buttons ?? []).toEqual([]); // the Stop button went with the final edit
    const failed = tg.calls().filter((c) => !c.ok && WRITES.has(c.method.toLowerCase()));
    expect(failed.map((c) => `${c.method} ${c.status}`)).toEqual(["sendMessage 502", "editMessageText 500"]);
    // The message first showed the answer in progress (with the Stop button), then its final text.
    expect(shown[0]!.history.length).toBeGreaterThanOrEqual(2);
    expect(tg.floodViolations()).toEqual([]);
    expect(model.requests).toHaveLength(1); // the platform's trouble never re-ran the model
  });

  it("Discord channel: 5xx on the first send, a 429 storm on the edits", async (ctx) => {
    const { expect } = ctx;
    const discord: FakeDiscord = await startFakeDiscord();
    const { model, stack } = await bot(
      ctx,
      { DISCORD_BOT_TOKEN: discord.token, DISCORD_API_BASE: discord.apiBase, SHOW_REASONING: "off" },
      () => discord.close(),
    );
    const channelId = discord.ids.general;
    discord.failNext({ route: "POST /channels/:id/messages", channelId, status: 502 });
    // retry_after (1.8 s) longer than the channel's pacing (~1 s, from the rate-limit headers).
    discord.failNext({
      route: "PATCH /channels/:id/messages/:id",
      channelId,
      status: 429,
      retryAfterMs: 1800,
      times: 2,
    });
    discord.failNext({ route: "PATCH /channels/:id/messages/:id", channelId, status: 503 });
    const asked = discord.userSays({ channelId, content: "why does bread rise?", mentionsBot: true });

    const last = await discord.waitFor(
      () => discord.botMessages(channelId).find((m) => m.content === ANSWER && (m.components ?? []).length === 0),
      { timeoutMs: 15_000, label: "the final answer" },
    );
    await waitUntil("the job to finish", async () => (await jobCount(stack.metrics, "done")) >= 1);
    expect(discord.botMessages(channelId).map((m) => m.content)).toEqual([ANSWER]);
    expect(last.message_reference?.message_id).toBe(asked.id);
    const writes = discord.requests.filter(
      (r) =>
        r.channelId === channelId &&
        (r.route === "POST /channels/:id/messages" || r.route === "PATCH /channels/:id/messages/:id"),
    );
    expect(writes.filter((r) => r.status >= 500).map((r) => r.status)).toEqual([502, 503]);
    const limited = writes.filter((r) => r.status === 429);
    expect(limited).toHaveLength(2);
    for (const l of limited) {
      const early = writes.filter((w) => w.at > l.at && w.at < l.at + 1800);
      expect(early.map((w) => `${w.route} +${w.at - l.at} ms`)).toEqual([]);
    }
    expect(discord.violations).toEqual([]);
    expect(model.requests).toHaveLength(1);
  });
});
