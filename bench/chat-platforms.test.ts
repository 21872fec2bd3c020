import { afterEach, describe, expect, it } from "vitest";
import { startChatPlatforms, type ChatPlatforms } from "./chat-platforms.js";

let platforms: ChatPlatforms | undefined;

afterEach(async () => {
  await platforms?.close();
  platforms = undefined;
});

/** A Bot API call the way grammY makes it. */
async function telegram(
  p: ChatPlatforms,
  method: string,
  params: Record<string, unknown>,
): Promise<{ ok: boolean; result?: unknown }> {
  const res = await fetch(`${p.telegram.apiRoot}/bot${p.telegram.token}/${method}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(params),
  });
  return (await res.json()) as { ok: boolean; result?: unknown };
}

/** A Discord REST call the way the bot's REST client makes it. */
async function discord(p: ChatPlatforms, method: string, path: string, body?: unknown): Promise<number> {
  const res = await fetch(`${p.discord.apiBase}/v10${path}`, {
    method,
    headers: { authorization: `Bot ${p.discord.token}`, ...(body ? { "content-type": "application/json" } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  await res.arrayBuffer();
  return res.status;
}

describe("the benchmark's platforms", () => {
  it("reads back from the Telegram fake when the adapter got a question and what the bot showed", async () => {
    platforms = await startChatPlatforms({ discordChannels: 1 });
    const p = platforms;
    const chat = p.conversation(1, "tg-private");
    const other = p.conversation(2, "tg-group");
    p.ask(chat);
    p.ask(other);
    const updates = (await telegram(p, "getUpdates", { timeout: 0 })).result as { message: { text: string } }[];
    expect(updates.map((u) => u.message.text)).toEqual([
      expect.stringContaining("conv-1:"),
      expect.stringContaining("@test_bot conv-2:"),
    ]);

    await telegram(p, "sendChatAction", { chat_id: Number(chat.chatId), action: "typing" });
    await telegram(p, "sendMessageDraft", { chat_id: Number(chat.chatId), draft_id: 5, text: "w1 w2" });
    await telegram(p, "sendMessage", { chat_id: Number(chat.chatId), text: "<b>w1</b> w2 w3", parse_mode: "HTML" });
    // Too soon after the message: recorded as a violation, and still applied in record mode.
    await telegram(p, "sendMessage", {
      chat_id: Number(chat.chatId),
      text: "w4",
      reply_markup: { inline_keyboard: [[{ text: "⏹ Stop", callback_data: "stop" }]] },
    });

    const record = p.records([chat]).get(chat.chatId);
    expect(record?.deliveredAt).toBeGreaterThanOrEqual(chat.askedAt ?? Infinity);
    expect(record?.writes.map((w) => [w.kind, w.ok, w.shows, w.final])).toEqual([
      ["typing", true, 0, false],
      ["draft", true, 2, false],
      ["send", true, 3, true],
      ["send", true, 4, false],
    ]);
    expect(p.violations([chat]).telegram).toEqual({ total: 1, byRule: { "per-chat": 1 } });
    expect(p.violations([other]).telegram.total).toBe(0);
    expect(chat.jobId).toMatch(/^telegram-100001-\d+$/);
  });

  it("reads back the Discord channel's requests, with a refused edit as not visible", async () => {
    platforms = await startChatPlatforms({ discordChannels: 2 });
    const p = platforms;
    const chat = p.conversation(1, "discord");
    p.ask(chat);
    const stop = [{ type: 1, components: [{ type: 2, style: 4, custom_id: "stop", label: "Stop" }] }];
    expect(await discord(p, "POST", `/channels/${chat.chatId}/typing`)).toBe(204);
    const sent = await fetch(`${p.discord.apiBase}/v10/channels/${chat.chatId}/messages`, {
      method: "POST",
      headers: { authorization: `Bot ${p.discord.token}`, "content-type": "application/json" },
      body: JSON.stringify({ content: "…", components: stop }),
    });
    const id = ((await sent.json()) as { id: string }).id;
    for (let i = 1; i <= 5; i++)
      await discord(p, "PATCH", `/channels/${chat.chatId}/messages/${id}`, {
        content: `w${i}`,
        components: i < 5 ? stop : [],
      });

    const record = p.records([chat]).get(chat.chatId);
    expect(record?.deliveredAt).toBe(chat.askedAt);
    // Five writes per five seconds: the sixth (the last edit) is refused with a 429.
    expect(record?.writes.map((w) => [w.kind, w.ok, w.shows, w.final])).toEqual([
      ["typing", true, 0, false],
      ["send", true, 0, false],
      ["edit", true, 1, false],
      ["edit", true, 2, false],
      ["edit", true, 3, false],
      ["edit", true, 4, false],
      ["edit", false, 5, true],
    ]);
    expect(p.violations([chat]).discord.total).toBe(1);
  });
});
