/**
 * The fake Bot API must not flatter us: these check it answers like the real server
 * (texts, codes, offsets, flood waits) when driven by the real grammY client.
 */
import { afterEach, describe, expect, it } from "vitest";
import { Api, GrammyError, HttpError, InputFile } from "grammy";
import { parseTelegramHtml, TelegramHtmlError } from "../../fakes/telegram-html.js";
import { privateChat, startFakeTelegram, type FakeTelegram, type FakeUser } from "../../fakes/telegram-server.js";

const alice: FakeUser = { id: 1001, first_name: "Alice" };
let fake: FakeTelegram | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

async function setup(opts: Parameters<typeof startFakeTelegram>[0] = {}) {
  let clock = 1_700_000_000_000;
  fake = await startFakeTelegram({ now: () => clock, ...opts });
  const api = new Api(fake.token, { apiRoot: fake.apiRoot });
  return { fake, api, tick: (ms: number) => (clock += ms) };
}

async function apiError(p: Promise<unknown>): Promise<GrammyError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(GrammyError);
  return err as GrammyError;
}

describe("Telegram HTML parsing (tdlib rules)", () => {
  it("decodes entities and produces UTF-16 offsets", () => {
    const parsed = parseTelegramHtml("😀 <b>bold &amp; <i>both</i></b> &lt;tag&gt; &nbsp; a&b");
    expect(parsed.text).toBe("😀 bold & both <tag> &nbsp; a&b");
    expect(parsed.entities).toEqual([
      { type: "bold", offset: 3, length: 11 },
      { type: "italic", offset: 10, length: 4 },
    ]);
  });

  it("rejects what Telegram rejects, with its messages and byte offsets", () => {
    const error = (html: string) => {
      try {
        parseTelegramHtml(html);
      } catch (err) {
        expect(err).toBeInstanceOf(TelegramHtmlError);
        return (err as Error).message;
      }
      return "parsed";
    };
    expect(error("<p>x</p>")).toBe('Unsupported start tag "p" at byte offset 0');
    expect(error("é <b>x")).toBe('Can\'t find end tag corresponding to start tag "b"');
    expect(error("<b>x</i>")).toBe('Unmatched end tag at byte offset 4, expected "</b>", found "</i>"');
    expect(error("x</b>")).toBe("Unexpected end tag at byte offset 1");
    expect(error("1 < 2")).toBe('Unsupported start tag "" at byte offset 2');
    expect(error("<b")).toBe("Unclosed start tag at byte offset 0");
    expect(error('<span class="x">a</span>')).toBe('Tag "span" must have class "tg-spoiler" at byte offset 0');
    expect(error('<pre><code class="language-ts">const a = 1;</code></pre>')).toBe("parsed");
    expect(parseTelegramHtml('<pre><code class="language-ts">x</code></pre>').entities).toEqual([
      { type: "pre", offset: 0, length: 1, language: "ts" },
    ]);
  });

  it("trims like Telegram: trailing whitespace, leading spaces and newlines", () => {
    expect(parseTelegramHtml("\n  <b>hi</b>  \n")).toEqual({
      text: "hi",
      entities: [{ type: "bold", offset: 0, length: 2 }],
    });
    expect(parseTelegramHtml("\n\thi").text).toBe("\thi");
    expect(parseTelegramHtml("\n\nhi \n").text).toBe("hi");
  });
});

describe("fake Bot API over HTTP", () => {
  it("answers a wrong token with 401 and an unknown method with 404", async () => {
    const { fake } = await setup();
    const wrong = new Api("1:wrong", { apiRoot: fake.apiRoot });
    expect((await apiError(wrong.getMe())).error_code).toBe(401);
    const res = await fetch(`${fake.apiRoot}/bot${fake.token}/noSuchMethod`, { method: "POST" });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ ok: false, error_code: 404, description: "Not Found: method not found" });
  });

  it("accepts form-encoded bodies like the real server (ids and JSON fields as strings)", async () => {
    const { fake } = await setup();
    fake.userSays(privateChat(alice), alice, "hi");
    const body = new URLSearchParams({
      chat_id: String(alice.id),
      text: "<b>ok</b>",
      parse_mode: "HTML",
      reply_parameters: JSON.stringify({ message_id: 1 }),
    });
    const res = await fetch(`${fake.apiRoot}/bot${fake.token}/sendMessage`, { method: "POST", body });
    const json = (await res.json()) as {
      ok: boolean;
      result: { text: string; entities: unknown[]; reply_to_message: { message_id: number } };
    };
    expect(json.ok).toBe(true);
    expect(json.result.text).toBe("ok");
    expect(json.result.reply_to_message.message_id).toBe(1);
    expect(fake.botMessages(alice.id)[0]?.entities).toEqual([{ type: "bold", offset: 0, length: 2 }]);
  });

  it("reads multipart bodies as the real server does: grammY's uploads and the platform's FormData alike", async () => {
    const { fake, api } = await setup();
    // grammY writes `content-disposition:form-data;name="…";filename=cert.pem` (no spaces, unquoted), which the real server takes.
    await api.setWebhook("https://bot.example/hook", {
      certificate: new InputFile(Buffer.alloc(1500, "c"), "cert.pem"),
      secret_token: "s3cret-token",
    });
    expect(fake.webhookInfo()).toEqual({ url: "https://bot.example/hook", secretToken: "s3cret-token" });
    expect(fake.requests("setWebhook")[0]?.params).toMatchObject({
      url: "https://bot.example/hook",
      certificate: { file: "cert.pem", size: 1500 },
    });

    fake.userSays(privateChat(alice), alice, "hi");
    const form = new FormData();
    form.set("chat_id", String(alice.id));
    form.set("text", 'ünïcode, "quoted"');
    const res = await fetch(`${fake.apiRoot}/bot${fake.token}/sendMessage`, { method: "POST", body: form });
    expect(((await res.json()) as { result: { text: string } }).result.text).toBe('ünïcode, "quoted"');

    const broken = await fetch(`${fake.apiRoot}/bot${fake.token}/sendMessage`, {
      method: "POST",
      headers: { "content-type": "multipart/form-data; boundary=xyz" },
      body: '--xyz\r\ncontent-disposition: form-data; name="text"\r\n\r\nno end',
    });
    expect([broken.status, ((await broken.json()) as { description: string }).description]).toEqual([
      400,
      "Bad Request: multipart body ends without its closing boundary",
    ]);
  });

  it("refuses bad HTML, over-long text, unknown chats and no-op edits with the real texts", async () => {
    const { fake, api, tick } = await setup();
    fake.userSays(privateChat(alice), alice, "hi");
    expect((await apiError(api.sendMessage(alice.id, "<p>x</p>", { parse_mode: "HTML" }))).description).toBe(
      'Bad Request: can\'t parse entities: Unsupported start tag "p" at byte offset 0',
    );
    expect((await apiError(api.sendMessage(alice.id, "x".repeat(4097)))).description).toBe(
      "Bad Request: message is too long",
    );
    expect((await apiError(api.sendMessage(424242, "hi"))).description).toBe("Bad Request: chat not found");
    // 4096 visible characters pass even when the HTML is longer.
    const sent = await api.sendMessage(alice.id, `<b>${"y".repeat(4096)}</b>`, { parse_mode: "HTML" });
    tick(1000);
    expect(
      (
        await apiError(
          api.editMessageText(alice.id, sent.message_id, `<b>${"y".repeat(4096)}</b>`, { parse_mode: "HTML" }),
        )
      ).description,
    ).toBe(
      "Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message",
    );
    await api.editMessageText(alice.id, sent.message_id, "y".repeat(4096));
    expect(fake.botMessages(alice.id)[0]).toMatchObject({ editCount: 1, entities: [] });
  });

  it("setMessageReaction takes only Telegram's allowed emoji (400 REACTION_INVALID), one at a time, replacing the last", async () => {
    const { fake, api } = await setup();
    const { message } = fake.userSays(privateChat(alice), alice, "hi");
    const id = Number(message.message_id);
    for (const emoji of ["✅", "🔧", "⚠️"]) {
      const refused = await apiError(api.setMessageReaction(alice.id, id, [{ type: "emoji", emoji } as never]));
      expect(refused).toMatchObject({ error_code: 400, description: "Bad Request: REACTION_INVALID" });
    }
    expect(
      (
        await apiError(
          api.setMessageReaction(alice.id, id, [
            { type: "emoji", emoji: "👀" },
            { type: "emoji", emoji: "👌" },
          ]),
        )
      ).description,
    ).toBe("Bad Request: REACTIONS_TOO_MANY");
    expect((await apiError(api.setMessageReaction(alice.id, 999, [{ type: "emoji", emoji: "👀" }]))).description).toBe(
      "Bad Request: message to react not found",
    );
    await api.setMessageReaction(alice.id, id, [{ type: "emoji", emoji: "👀" }]);
    await api.setMessageReaction(alice.id, id, [{ type: "emoji", emoji: "👨‍💻" }]);
    await api.setMessageReaction(alice.id, id, [{ type: "emoji", emoji: "👌" }]);
    expect(fake.botReactions(alice.id, id)).toEqual(["👌"]);
    expect(fake.reactionLog().map((r) => r.emoji)).toEqual([["👀"], ["👨‍💻"], ["👌"]]);
    // Not messages: no flood limit counted them.
    expect(fake.floodViolations()).toEqual([]);
  });

  it("enforces the per-chat interval with a flood wait and records every violation", async () => {
    const { fake, api, tick } = await setup();
    fake.userSays(privateChat(alice), alice, "hi");
    await api.sendMessage(alice.id, "one");
    tick(400);
    const err = await apiError(api.sendMessage(alice.id, "two"));
    expect(err.error_code).toBe(429);
    expect(err.description).toBe("Too Many Requests: retry after 1");
    expect(err.parameters.retry_after).toBe(1);
    tick(700); // 1.1 s after "one", but still inside the 1 s flood wait that began at 0.4 s
    expect((await apiError(api.sendMessage(alice.id, "three"))).error_code).toBe(429);
    tick(400);
    await api.sendMessage(alice.id, "four");
    expect(fake.floodViolations().map((v) => v.rule)).toEqual(["per-chat", "flood-wait"]);
    expect(fake.botMessages(alice.id).map((m) => m.text)).toEqual(["one", "four"]);
  });

  it("allows 20 messages a minute in a group, then answers 429 until the window frees up", async () => {
    const { fake, api, tick } = await setup();
    const group = { id: -100500, type: "supergroup" as const, title: "G" };
    fake.userSays(group, alice, "hi");
    for (let i = 0; i < 20; i++) {
      await api.sendMessage(group.id, `m${i}`);
      tick(1000);
    }
    const err = await apiError(api.sendMessage(group.id, "m20"));
    expect(err.error_code).toBe(429);
    expect(err.parameters.retry_after).toBe(40);
    expect(fake.floodViolations()).toMatchObject([{ rule: "per-group", chatId: group.id, retryAfter: 40 }]);
  });

  it("long-polls: blocks until an update arrives, confirms by offset, 409 for a competing poll", async () => {
    const { fake, api } = await setup();
    const first = api.getUpdates({ timeout: 5 });
    const competing = api.getUpdates({ timeout: 5 });
    expect((await apiError(first)).description).toBe(
      "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running",
    );
    const { updateId } = fake.userSays(privateChat(alice), alice, "hello");
    const updates = await competing;
    expect(updates.map((u) => u.update_id)).toEqual([updateId]);
    expect(updates[0]?.message?.text).toBe("hello");
    // Not confirmed yet: the same update comes again.
    expect((await api.getUpdates({ timeout: 0 })).map((u) => u.update_id)).toEqual([updateId]);
    expect(await api.getUpdates({ offset: (updateId as number) + 1, timeout: 0 })).toEqual([]);
    expect(fake.pendingUpdateIds()).toEqual([]);
  });

  it("filters update types by allowed_updates", async () => {
    const { fake, api } = await setup();
    await api.getUpdates({ timeout: 0, allowed_updates: ["message"] });
    const said = fake.userSays(privateChat(alice), alice, "hi");
    expect(fake.userEdits(alice.id, said.message.message_id as number, "hi!")).toBeUndefined();
    expect(fake.pendingUpdateIds()).toEqual([said.updateId]);
  });

  it("fails on demand: 429 with retry_after, HTML 502 (HttpError), dropped connection", async () => {
    const { fake, api } = await setup();
    fake.userSays(privateChat(alice), alice, "hi");
    fake.failNext("sendMessage", 1, { retryAfter: 9 });
    fake.failNext("sendMessage", 1, { status: 502, html: true });
    fake.failNext("sendMessage", 1, { networkError: true });
    const limited = await apiError(api.sendMessage(alice.id, "a"));
    expect([limited.error_code, limited.parameters.retry_after, limited.description]).toEqual([
      429,
      9,
      "Too Many Requests: retry after 9",
    ]);
    await expect(api.sendMessage(alice.id, "b")).rejects.toBeInstanceOf(HttpError);
    await expect(api.sendMessage(alice.id, "c")).rejects.toBeInstanceOf(HttpError);
    await api.sendMessage(alice.id, "d");
    expect(fake.visibleText(alice.id)).toBe("d");
  });

  it("puts forum messages in their topic and makes a plain topic message reply to the topic's creation", async () => {
    const { fake } = await setup();
    const forum = { id: -100777, type: "supergroup" as const, title: "Forum", is_forum: true };
    fake.addChat(forum);
    const topic = fake.createForumTopic(forum.id, "Weather", alice);
    const { message } = fake.userSays(forum, alice, "in the topic", { threadId: topic });
    expect(message).toMatchObject({
      message_thread_id: topic,
      is_topic_message: true,
      reply_to_message: { message_id: topic, forum_topic_created: { name: "Weather" } },
    });
  });
});
