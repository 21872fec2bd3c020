/**
 * The Telegram reply port against the fake Bot API, through the real grammY Api:
 * what the user sees after send/edit/draft, and how Bot API failures reach the engine.
 */
import { afterEach, describe, expect, it } from "vitest";
import { Api, GrammyError, HttpError } from "grammy";
import { RateLimitedError, RejectedContentError, type ReplyPort } from "../../../src/contracts/reply-port.js";
import { createTelegramReplyPortFactory, STOP_CALLBACK_DATA } from "../../../src/bots/telegram/telegram-reply-port.js";
import {
  TELEGRAM_GROUP_EDIT_INTERVAL_MS,
  TELEGRAM_PRIVATE_EDIT_INTERVAL_MS,
} from "../../../src/bots/telegram/telegram-pacing.js";
import type { InboundMessage } from "../../../src/contracts/inbound-message.js";
import {
  privateChat,
  startFakeTelegram,
  type FakeChat,
  type FakeTelegram,
  type FakeUser,
} from "../../fakes/telegram-server.js";
import { inboundMessage } from "../../support/inbound-message.js";

const alice: FakeUser = { id: 1001, first_name: "Alice" };
let fake: FakeTelegram | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

/** A fake with a hand-driven clock (flood control uses it), one user message, and a port answering it. */
async function setup(
  opts: { chat?: FakeChat; threadId?: number; useDrafts?: boolean; toHtml?: (md: string) => string } = {},
) {
  let clock = 1_700_000_000_000;
  fake = await startFakeTelegram({ now: () => clock });
  const chat = opts.chat ?? privateChat(alice);
  fake.addChat(chat);
  const threadId =
    opts.threadId ??
    (chat.type === "supergroup" && chat.is_forum ? fake.createForumTopic(chat.id, "Topic", alice) : undefined);
  const said = fake.userSays(chat, alice, "question?", threadId !== undefined ? { threadId } : {});
  const inbound: InboundMessage = inboundMessage({
    chatId: String(chat.id),
    ...(threadId !== undefined ? { threadId: String(threadId) } : {}),
    messageId: String(said.message.message_id),
    chatType: chat.type === "private" ? "private" : "group",
    author: { id: String(alice.id), displayName: "Alice" },
    text: "question?",
    receivedAt: clock,
  });
  const api = new Api(fake.token, { apiRoot: fake.apiRoot });
  const factory = createTelegramReplyPortFactory({
    api,
    useDrafts: opts.useDrafts ?? false,
    ...(opts.toHtml ? { toHtml: opts.toHtml } : {}),
  });
  const port: ReplyPort = factory(inbound);
  return {
    fake,
    port,
    chat,
    threadId,
    userMessageId: said.message.message_id as number,
    tick: (ms: number) => (clock += ms),
  };
}

async function rejection(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => {
      throw new Error("expected a rejection");
    },
    (e: unknown) => e,
  );
}

describe("Telegram reply port", () => {
  it("sends formatted HTML as a reply to the user's message, with a Stop button until the final edit", async () => {
    const { fake, port, chat, userMessageId, tick } = await setup();
    const id = await port.send(port.format("**Sunny** in *Paris* & <dry>"), { final: false });
    let shown = fake.botMessages(chat.id)[0];
    expect(shown).toMatchObject({
      messageId: Number(id),
      text: "Sunny in Paris & <dry>",
      replyToMessageId: userMessageId,
      buttons: [[{ text: "⏹ Stop", callback_data: STOP_CALLBACK_DATA }]],
    });
    expect(shown?.entities.map((e) => e.type)).toEqual(["bold", "italic"]);
    expect(fake.calls("sendMessage")[0]?.params).toMatchObject({
      link_preview_options: { is_disabled: true },
      parse_mode: "HTML",
    });

    tick(TELEGRAM_PRIVATE_EDIT_INTERVAL_MS);
    await port.edit(id, port.format("**Sunny** in *Paris*, 21°C."), { final: true });
    shown = fake.botMessages(chat.id)[0];
    expect(shown?.text).toBe("Sunny in Paris, 21°C.");
    expect(shown?.buttons).toBeUndefined();
    expect(shown?.editCount).toBe(1);
    expect(fake.floodViolations()).toEqual([]);
  });

  it("treats 'message is not modified' as success", async () => {
    const { fake, port, chat, tick } = await setup();
    const id = await port.send(port.format("same"), { final: true });
    tick(1100);
    await expect(port.edit(id, port.format("same"), { final: true })).resolves.toBeUndefined();
    expect(fake.calls("editMessageText")[0]?.description).toMatch(/^Bad Request: message is not modified/);
    expect(fake.botMessages(chat.id)[0]?.editCount).toBe(0);
  });

  it("turns 429 into RateLimitedError with retry_after in milliseconds, from the fake's flood control too", async () => {
    const { fake, port } = await setup();
    fake.failNext("sendMessage", 1, { retryAfter: 7 });
    const injected = await rejection(port.send(port.format("hi"), {}));
    expect(injected).toBeInstanceOf(RateLimitedError);
    expect((injected as RateLimitedError).retryAfterMs).toBe(7000);

    const id = await port.send(port.format("hi"), { final: false });
    // An edit right after the send breaks the documented one-per-second rule.
    const flooded = await rejection(port.edit(id, port.format("hi there"), { final: false }));
    expect(flooded).toBeInstanceOf(RateLimitedError);
    expect((flooded as RateLimitedError).retryAfterMs).toBe(1000);
    expect(fake.floodViolations()).toMatchObject([{ rule: "per-chat", method: "editMessageText" }]);
  });

  it("falls back to the Markdown source as plain text when Telegram cannot parse the HTML", async () => {
    // A renderer bug: HTML Telegram rejects.
    const { fake, port, chat, tick } = await setup({ toHtml: (md) => `<p>${md}</p>` });
    const id = await port.send(port.format("**bold** answer"), { final: false });
    expect(fake.botMessages(chat.id)[0]).toMatchObject({ text: "**bold** answer", entities: [] });
    expect(fake.calls("sendMessage").map((c) => [c.status, c.params.parse_mode])).toEqual([
      [400, "HTML"],
      [200, undefined],
    ]);
    tick(1100);
    await port.edit(id, port.format("**bold** answer, longer"), { final: true });
    expect(fake.visibleText(chat.id)).toBe("**bold** answer, longer");
  });

  it("uses the visible text when the rendered HTML has no known Markdown source", async () => {
    const { fake, port, chat } = await setup();
    await port.send({ text: "<b>half &amp; <i>written", parseMode: "HTML" }, { final: true });
    expect(fake.visibleText(chat.id)).toBe("half & written");
  });

  it("answers in the forum topic: replies, continuations and typing carry message_thread_id", async () => {
    const forum: FakeChat = { id: -100200, type: "supergroup", title: "Forum", is_forum: true };
    const { fake, port, threadId, userMessageId, tick } = await setup({ chat: forum });
    expect(port.limits).toEqual({ maxLength: 4096, minEditIntervalMs: TELEGRAM_GROUP_EDIT_INTERVAL_MS });
    await port.typing?.({});
    expect(fake.lastChatAction(forum.id)).toMatchObject({ action: "typing", threadId });
    await port.send(port.format("part one"), { final: true });
    tick(TELEGRAM_GROUP_EDIT_INTERVAL_MS);
    await port.send(port.format("part two"), { continuation: true, final: true });
    const mine = fake.botMessages(forum.id, { threadId });
    expect(mine.map((m) => [m.text, m.replyToMessageId])).toEqual([
      ["part one", userMessageId],
      // A continuation follows the first part in the topic without quoting the question again.
      ["part two", threadId],
    ]);
    expect(fake.calls("sendMessage")[1]?.params.reply_parameters).toBeUndefined();
    expect(port.draft).toBeUndefined();
  });

  it("streams drafts in private chats, then the sent answer replaces them", async () => {
    const { fake, port, chat } = await setup({ useDrafts: true });
    expect(port.draft).toBeDefined();
    await port.draft?.(42, port.format("Thinking about **it**"), {});
    await port.draft?.(42, port.format("Thinking about **it** more"), {});
    expect(fake.draft(chat.id)).toMatchObject({
      draftId: 42,
      text: "Thinking about it more",
      updates: 2,
      canStop: true,
    });
    await port.send(port.format("Done."), { final: true });
    expect(fake.draft(chat.id)).toBeUndefined();
    expect(fake.visibleText(chat.id)).toBe("Done.");
  });

  it("reports content Telegram will never accept as RejectedContentError, and leaves network and server errors to retries", async () => {
    const { fake, port } = await setup();
    expect(await rejection(port.send({ text: "x".repeat(4097) }, {}))).toBeInstanceOf(RejectedContentError);
    fake.failNext("sendMessage", 1, { networkError: true });
    expect(await rejection(port.send(port.format("a"), {}))).toBeInstanceOf(HttpError);
    fake.failNext("sendMessage", 1, { status: 500 });
    const serverError = await rejection(port.send(port.format("a"), {}));
    expect(serverError).toBeInstanceOf(GrammyError);
    expect((serverError as GrammyError).error_code).toBe(500);
  });

  it("has no draft method in groups and refuses messages of other platforms", async () => {
    const group: FakeChat = { id: -300, type: "group", title: "G" };
    const { port } = await setup({ chat: group, useDrafts: true });
    expect(port.draft).toBeUndefined();
    expect(port.limits.minEditIntervalMs).toBe(TELEGRAM_GROUP_EDIT_INTERVAL_MS);
    const factory = createTelegramReplyPortFactory({ api: new Api("1:x"), useDrafts: false });
    expect(() => factory(inboundMessage({ platform: "discord", chatId: "1", chatType: "group" }))).toThrow(/discord/);
  });
});

describe("Telegram status reactions (reply port)", () => {
  it("replaces the reaction per phase, shows 👨‍💻 once, and waits out a 429 instead of losing the change", async () => {
    fake = await startFakeTelegram();
    const said = fake.userSays(privateChat(alice), alice, "question?");
    const messageId = Number(said.message.message_id);
    const api = new Api(fake.token, { apiRoot: fake.apiRoot });
    const port = createTelegramReplyPortFactory({ api, useDrafts: false, statusReactions: true })(
      inboundMessage({
        chatId: String(alice.id),
        messageId: String(messageId),
        chatType: "private",
        author: { id: String(alice.id), displayName: "Alice" },
        text: "question?",
      }),
    );
    fake.failNext("setMessageReaction", 1, { retryAfter: 1 });
    void port.status?.("tools");
    void port.status?.("tools");
    await port.status?.("done");
    expect(fake.botReactions(alice.id, messageId)).toEqual(["👌"]);
    expect(fake.reactionLog().map((r) => r.emoji)).toEqual([["👨‍💻"], ["👌"]]);
    expect(fake.calls("setMessageReaction").map((c) => c.status)).toEqual([429, 200, 200]);
  });

  it("off: the port has no status at all", async () => {
    fake = await startFakeTelegram();
    const api = new Api(fake.token, { apiRoot: fake.apiRoot });
    const port = createTelegramReplyPortFactory({ api, useDrafts: false })(inboundMessage({ chatId: "1001" }));
    expect(port.status).toBeUndefined();
  });
});
