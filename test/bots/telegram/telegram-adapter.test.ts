/**
 * The Telegram adapter against the fake Bot API (real HTTP, real grammY polling), with a
 * recording BotGateway in place of the queue: which messages become questions, what
 * users are told directly, and that no update is confirmed before it is enqueued.
 */
import { afterEach, describe, expect, it } from "vitest";
import {
  createTelegramAdapter,
  TELEGRAM_COMMANDS,
  type TelegramAdapter,
  type TelegramAdapterOptions,
} from "../../../src/bots/telegram/telegram-adapter.js";
import { STOP_CALLBACK_DATA } from "../../../src/bots/telegram/telegram-reply-port.js";
import {
  privateChat,
  startFakeTelegram,
  type FakeChat,
  type FakeTelegram,
  type FakeTelegramOptions,
  type FakeUser,
} from "../../fakes/telegram-server.js";
import { createRecordingGateway, type RecordingGateway } from "./recording-gateway.js";
import { freePort } from "../../support/free-port.js";
import { Registry } from "prom-client";
import { startOpsServer } from "../../../src/observability/http-server.js";

const alice: FakeUser = { id: 1001, first_name: "Alice", last_name: "Smith", username: "alice" };
const bob: FakeUser = { id: 1002, first_name: "Bob" };
const carol: FakeUser = { id: 1003, first_name: "", username: "carol" };
const group: FakeChat = { id: -100123, type: "supergroup", title: "Friends" };
const RECEIVED_AT = 1_700_000_000_123;

let fake: FakeTelegram | undefined;
const adapters: TelegramAdapter[] = [];
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(adapters.splice(0).map((a) => a.stop()));
  for (const close of closers.splice(0)) await close();
  await fake?.close();
  fake = undefined;
});

interface Setup {
  fake: FakeTelegram;
  gateway: RecordingGateway;
  adapter: TelegramAdapter;
  /** Starts one more adapter on the same fake (a restart after a crash). */
  another(gateway: RecordingGateway): Promise<TelegramAdapter>;
}

async function setup(opts: Partial<TelegramAdapterOptions> = {}, fakeOpts: FakeTelegramOptions = {}): Promise<Setup> {
  // Flood limits are recorded, not enforced, so a burst of command replies does not slow the suite down;
  // the reply port's tests cover enforcement.
  const f = await startFakeTelegram({ floodLimits: { mode: "record" }, ...fakeOpts });
  fake = f;
  const make = async (gateway: RecordingGateway) => {
    const adapter = createTelegramAdapter({
      token: f.token,
      apiRoot: f.apiRoot,
      gateway,
      allowedChats: [],
      allowedUsers: [],
      maxInputChars: 200,
      pollingTimeoutSeconds: 5,
      enqueueRetry: { initialDelayMs: 10, maxDelayMs: 40 },
      stopTimeoutMs: 2000,
      now: () => RECEIVED_AT,
      ...opts,
    });
    adapters.push(adapter);
    await adapter.start();
    // The first poll carries allowed_updates; from then on the fake filters like Telegram.
    if (!opts.webhook) await f.waitFor(() => f.isLongPolling(), { what: "the adapter to long-poll" });
    return adapter;
  };
  const gateway = createRecordingGateway();
  const adapter = await make(gateway);
  return { fake: f, gateway, adapter, another: make };
}

/** Waits until the gateway saw a message with this text (the adapter handles a chat's updates in order). */
function offeredText(f: FakeTelegram, gateway: RecordingGateway, text: string) {
  return f.waitFor(() => gateway.offered.find((m) => m.text === text), {
    what: `"${text}" to be offered to the queue`,
  });
}

function lastBotText(f: FakeTelegram, chatId: number): string | undefined {
  return f.botMessages(chatId).at(-1)?.text;
}

describe("Telegram adapter: what becomes a question", () => {
  it("enqueues every private message with the fields the worker needs, shows typing at once, and answers nothing itself", async () => {
    const { fake, gateway } = await setup();
    const said = fake.userSays(privateChat(alice), alice, "  What's the weather in Paris?  ");
    const offered = await offeredText(fake, gateway, "What's the weather in Paris?");
    expect(offered).toEqual({
      platform: "telegram",
      conversationKey: "tg:1001",
      chatId: "1001",
      messageId: String(said.message.message_id),
      chatType: "private",
      author: { id: "1001", displayName: "Alice Smith", username: "alice" },
      text: "What's the weather in Paris?",
      receivedAt: RECEIVED_AT,
      typingOnReceipt: true,
    });
    expect(gateway.queued).toHaveLength(1);
    // The first sign of life comes from here, as the question is queued, before any worker has it.
    const actions = await fake.waitFor(
      () => {
        const calls = fake.calls().filter((c) => c.method === "sendChatAction");
        return calls.length > 0 ? calls : undefined;
      },
      { what: "the typing indicator" },
    );
    expect(actions.map((c) => [Number(c.params.chat_id), c.params.action, c.params.message_thread_id])).toEqual([
      [alice.id, "typing", undefined],
    ]);
    expect(fake.botMessages(alice.id)).toEqual([]);
    expect(fake.registeredCommands()).toEqual(TELEGRAM_COMMANDS.map((c) => ({ ...c })));
  });

  it("in a group takes only mentions, replies to the bot and /ask, cuts the mention, and names the speaker", async () => {
    const { fake, gateway } = await setup();
    fake.userSays(group, alice, "just chatting, nobody asked the bot");
    fake.userSays(group, alice, "@test_bot, what is the capital of France?");
    fake.userSays(group, bob, "/ask@test_bot what did Alice ask?");
    fake.userSays(group, bob, "/ask what about Spain");
    fake.userSays(group, alice, "/ask@other_bot this is for another bot");
    fake.userSays(group, carol, "Test Bot tell me a joke", {
      entities: [
        { type: "text_mention", offset: 0, length: 8, user: { id: fake.me.id, is_bot: true, first_name: "Test Bot" } },
      ],
    });
    const earlier = fake.botSays(group.id, "Paris.");
    fake.userSays(group, alice, "and Germany?", { replyTo: earlier.messageId });
    const bobsLine = fake.userSays(group, bob, "I like trains");
    fake.userSays(group, alice, "me too", { replyTo: bobsLine.message.message_id as number });
    fake.userSays(group, bob, "ask @test_bot now please");
    await offeredText(fake, gateway, "ask now please");

    expect(gateway.queued.map((m) => [m.author.displayName, m.text])).toEqual([
      ["Alice Smith", "what is the capital of France?"],
      ["Bob", "what did Alice ask?"],
      ["Bob", "what about Spain"],
      ["@carol", "tell me a joke"],
      ["Alice Smith", "and Germany?"],
      ["Bob", "ask now please"],
    ]);
    expect(new Set(gateway.queued.map((m) => [m.conversationKey, m.chatType].join(" ")))).toEqual(
      new Set(["tg:-100123 group"]),
    );
    expect(gateway.queued[4]?.replyTo).toEqual({
      messageId: String(earlier.messageId),
      authorName: "Test Bot",
      text: "Paris.",
    });
    expect(fake.botMessages(group.id).map((m) => m.text)).toEqual(["Paris."]);
  });

  it("gives each forum topic its own conversation and answers commands in the topic", async () => {
    const { fake, gateway } = await setup();
    const forum: FakeChat = { id: -100777, type: "supergroup", title: "Forum", is_forum: true };
    fake.addChat(forum);
    const weather = fake.createForumTopic(forum.id, "Weather", alice);
    const news = fake.createForumTopic(forum.id, "News", alice);
    fake.userSays(forum, alice, "@test_bot rain tomorrow?", { threadId: weather });
    fake.userSays(forum, bob, "@test_bot any headlines?", { threadId: news });
    fake.userSays(forum, bob, "/help@test_bot", { threadId: news });
    await offeredText(fake, gateway, "any headlines?");
    expect(gateway.queued.map((m) => [m.conversationKey, m.threadId, m.replyTo])).toEqual([
      [`tg:-100777:${weather}`, String(weather), undefined],
      [`tg:-100777:${news}`, String(news), undefined],
    ]);
    const help = await fake.waitFor(() => fake.botMessages(forum.id).at(-1), { what: "the help reply" });
    expect(help.threadId).toBe(news);
    expect(help.text).toContain("/reset");
  });

  it("ignores bots, whitespace-only text and edits", async () => {
    const { fake, gateway } = await setup();
    const robot: FakeUser = { id: 2001, first_name: "Robo", is_bot: true, username: "robo_bot" };
    fake.userSays(group, robot, "@test_bot hello from a bot");
    fake.userSays(privateChat(alice), alice, "   \n ");
    const first = fake.userSays(privateChat(alice), alice, "first");
    await offeredText(fake, gateway, "first");
    fake.userEdits(alice.id, first.message.message_id as number, "first, edited");
    fake.userSays(privateChat(alice), alice, "second");
    await offeredText(fake, gateway, "second");
    expect(gateway.offered.map((m) => m.text)).toEqual(["first", "second"]);
    expect(fake.botMessages(alice.id)).toEqual([]);
  });
});

describe("Telegram adapter: what it answers itself", () => {
  it("runs /reset, /stop, /help, /start and answers unknown commands with help", async () => {
    const { fake, gateway } = await setup();
    const chat = privateChat(alice);
    const reply = async (text: string) => {
      const before = fake.botMessages(alice.id).length;
      fake.userSays(chat, alice, text);
      return fake.waitFor(() => fake.botMessages(alice.id)[before]?.text, { what: `the answer to ${text}` });
    };
    expect(await reply("/reset")).toMatch(/forgot this conversation/);
    expect(gateway.resets).toEqual(["tg:1001"]);
    expect(await reply("/stop")).toMatch(/^Nothing to stop/);
    gateway.stopResult = true;
    // A stopped answer shows "⏹ stopped" itself; the command adds no message of its own.
    const { message: stopped } = fake.userSays(chat, alice, "/stop@test_bot");
    await fake.waitFor(() => gateway.stops.length === 2, { what: "the second stop" });
    expect(gateway.stops).toEqual(["tg:1001", "tg:1001"]);
    expect(await reply("/help")).toContain("/stop stops the answer");
    expect(fake.botMessages(alice.id).filter((m) => m.replyToMessageId === stopped.message_id)).toEqual([]);
    expect(await reply("/start")).toMatch(/^👋 Hi!/);
    expect(await reply("/frobnicate now")).toMatch(/^I don't know the command \/frobnicate\.[\s\S]*\/reset/);
    expect(gateway.offered).toEqual([]);
    // Answers quote the command they answer.
    const [first] = fake.botMessages(alice.id);
    expect(first?.replyToMessageId).toBe(1);
  });

  it("refuses over-long input politely instead of queueing it", async () => {
    const { fake, gateway } = await setup({ maxInputChars: 20 });
    fake.userSays(privateChat(alice), alice, "x".repeat(21));
    const refusal = await fake.waitFor(() => lastBotText(fake, alice.id), { what: "the refusal" });
    expect(refusal).toMatch(/too long.*21 characters.*limit is 20/);
    fake.userSays(privateChat(alice), alice, "y".repeat(20));
    await offeredText(fake, gateway, "y".repeat(20));
    expect(gateway.offered).toHaveLength(1);
  });

  it("keeps strangers out: a short note in private chats, silence in groups", async () => {
    const { fake, gateway } = await setup({ allowedUsers: [String(bob.id)] });
    fake.userSays(privateChat(alice), alice, "hello?");
    expect(await fake.waitFor(() => lastBotText(fake, alice.id))).toMatch(/not available to you/);
    fake.userSays(group, alice, "@test_bot hello?");
    fake.userSays(group, bob, "@test_bot I am allowed");
    await offeredText(fake, gateway, "I am allowed");
    expect(gateway.offered.map((m) => m.author.id)).toEqual([String(bob.id)]);
    expect(fake.botMessages(group.id)).toEqual([]);
  });

  it("passes on the queue's refusal (e.g. the per-user rate limit) to the user", async () => {
    const { fake, gateway } = await setup();
    gateway.answerNext({ status: "refused", reason: "Slow down: 20 messages a minute at most." });
    fake.userSays(privateChat(alice), alice, "one more");
    expect(await fake.waitFor(() => lastBotText(fake, alice.id))).toBe("Slow down: 20 messages a minute at most.");
    // Nothing is coming, so nothing says "typing".
    expect(fake.calls().filter((c) => c.method === "sendChatAction")).toEqual([]);
  });

  it("stops the answer from the Stop button and from a draft's stop", async () => {
    const { fake, gateway } = await setup();
    gateway.stopResult = true;
    fake.addChat(privateChat(alice));
    const streaming = fake.botSays(alice.id, "Writing…");
    const { queryId } = fake.userPresses(alice.id, alice, streaming.messageId, STOP_CALLBACK_DATA);
    expect(await fake.waitFor(() => fake.callbackAnswer(queryId))).toEqual({ text: "⏹ Stopping…" });
    fake.userStopsDraft(alice.id, 77);
    await fake.waitFor(() => gateway.stops.length === 2);
    expect(gateway.stops).toEqual(["tg:1001", "tg:1001"]);
  });

  it("waits out a 429 on its own replies", async () => {
    const { fake } = await setup();
    fake.failNext("sendMessage", 1, { retryAfter: 1 });
    fake.userSays(privateChat(alice), alice, "/help");
    await fake.waitFor(() => lastBotText(fake, alice.id), { timeoutMs: 4000 });
    const sends = fake.calls("sendMessage");
    expect(sends.map((c) => c.status)).toEqual([429, 200]);
    expect((sends[1]?.at ?? 0) - (sends[0]?.at ?? 0)).toBeGreaterThanOrEqual(1000);
  });
});

describe("Telegram adapter: nothing is lost", () => {
  it("does not confirm an update (next getUpdates offset) before enqueue resolves", async () => {
    const { fake, gateway } = await setup();
    gateway.hold();
    const { updateId } = fake.userSays(privateChat(alice), alice, "slow queue");
    await offeredText(fake, gateway, "slow queue");
    // Kept sleep: while the enqueue is held the adapter does nothing observable (today it does not poll); this is the
    // window a wrong adapter would use to confirm the update.
    await new Promise((r) => setTimeout(r, 300));
    const confirming = () => fake.getUpdatesOffsets().filter((offset) => offset > (updateId as number));
    expect(confirming()).toEqual([]);
    expect(fake.pendingUpdateIds()).toContain(updateId);
    gateway.release();
    await fake.waitFor(() => fake.pendingUpdateIds().length === 0, { what: "the update to be confirmed" });
    expect(confirming().length).toBeGreaterThan(0);
    expect(gateway.queued.map((m) => m.text)).toEqual(["slow queue"]);
  });

  it("keeps offering a message while the queue fails, and confirms it only once it is taken", async () => {
    const { fake, gateway } = await setup();
    gateway.failNextEnqueues(2);
    const pendingAtEachTry: boolean[] = [];
    const enqueue = gateway.enqueue.bind(gateway);
    let updateId: number | undefined;
    gateway.enqueue = async (m) => {
      pendingAtEachTry.push(fake.pendingUpdateIds().includes(updateId as number));
      return enqueue(m);
    };
    updateId = fake.userSays(privateChat(alice), alice, "while redis restarts").updateId;
    await fake.waitFor(() => gateway.queued.length === 1 && fake.pendingUpdateIds().length === 0);
    expect(gateway.offered.map((m) => m.messageId)).toEqual(["1", "1", "1"]);
    expect(pendingAtEachTry).toEqual([true, true, true]);
  });

  it("redelivers an update that was not enqueued before a crash; the second offer has the same message id", async () => {
    const { fake, gateway, adapter, another } = await setup({ stopTimeoutMs: 300 });
    gateway.hold();
    const { updateId } = fake.userSays(privateChat(alice), alice, "are you there?");
    await offeredText(fake, gateway, "are you there?");
    await adapter.stop(); // gives up waiting: like a crash mid-enqueue
    expect(fake.pendingUpdateIds()).toEqual([updateId]);
    const offsetsBeforeRestart = fake.getUpdatesOffsets();

    gateway.release(); // the first attempt reached Redis after all
    await fake.waitFor(() => gateway.queued.length === 1);
    await another(gateway);
    await fake.waitFor(() => gateway.offered.length === 2, { what: "the redelivered update to be offered again" });
    expect(gateway.offered.map((m) => m.messageId)).toEqual(["1", "1"]);
    expect(gateway.queued).toHaveLength(1); // deduplicated by job id
    await fake.waitFor(() => fake.pendingUpdateIds().length === 0);
    // Typing once, for the offer that queued it; the redelivered duplicate shows nothing more.
    await fake.waitFor(() => fake.calls().some((c) => c.method === "sendChatAction"), { what: "the typing indicator" });
    // A later question of the chat is queued and shows typing; the duplicate, handled before it, showed none.
    fake.userSays(privateChat(alice), alice, "still there?");
    await fake.waitFor(() => gateway.queued.some((m) => m.text === "still there?"));
    const typing = () => fake.calls().filter((c) => c.method === "sendChatAction");
    await fake.waitFor(() => typing().length >= 2, { what: "typing for the later question" });
    expect(typing()).toHaveLength(2);
    // Before the restart nobody had asked for an offset past the update: the stopped adapter did not confirm it.
    expect(offsetsBeforeRestart.every((offset) => offset <= (updateId as number))).toBe(true);
  });

  it("in webhook mode answers 500 when the queue fails, so Telegram delivers again", async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/telegram/hook`;
    // Served as the bots role serves it: a route on the role's one HTTP server.
    let adapter: TelegramAdapter | undefined;
    const ops = await startOpsServer({
      port,
      host: "127.0.0.1",
      registry: new Registry(),
      checks: [],
      routes: [{ path: "/telegram/hook", handler: (req, res) => void adapter?.handleWebhook(req, res) }],
    });
    closers.push(() => new Promise<void>((resolve) => ops.close(() => resolve())));
    const started = await setup({ webhook: { url } }, { webhookRetryDelayMs: 20 });
    adapter = started.adapter;
    const { fake, gateway } = started;
    expect(fake.webhookInfo()?.url).toBe(url);
    const secret = fake.webhookInfo()?.secretToken;
    expect(secret).toMatch(/^[A-Za-z0-9_-]{16,}$/);
    gateway.failNextEnqueues(1);
    fake.userSays(privateChat(alice), alice, "via webhook");
    // The delivery's status is recorded when its response ends, just after the enqueue resolved.
    await fake.waitFor(() => gateway.queued.length === 1 && fake.webhookDeliveries().length === 2, {
      what: "the webhook update to be enqueued on the second delivery",
    });
    expect(fake.webhookDeliveries().map((d) => d.status)).toEqual([500, 200]);
    const forged = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(forged.status).toBe(401);
  });

  it("fails to start with a wrong token", async () => {
    const f = await startFakeTelegram();
    fake = f;
    const adapter = createTelegramAdapter({
      token: "123:wrong",
      apiRoot: f.apiRoot,
      gateway: createRecordingGateway(),
      allowedChats: [],
      allowedUsers: [],
      maxInputChars: 100,
    });
    await expect(adapter.start()).rejects.toThrow(/401/);
  });
});
