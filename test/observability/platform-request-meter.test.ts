/**
 * The platform request meters against the fake Bot API and the fake Discord REST: each
 * request that reached (or failed to reach) the platform is counted once, by kind and by
 * how it ended, as the fakes recorded it.
 */
import { afterEach, describe, expect, it } from "vitest";
import { Api, GrammyError, HttpError } from "grammy";
import { startFakeTelegram, privateChat, type FakeTelegram } from "../fakes/telegram-server.js";
import { startFakeDiscord, type FakeDiscord } from "../fakes/discord-server.js";
import { createDiscordRestClient } from "../../src/bots/discord/discord-rest-client.js";
import { RateLimitedError } from "../../src/contracts/reply-port.js";
import { createMetrics, type Metrics } from "../../src/observability/metrics.js";
import { discordRequestKind, meteredDiscordRequests } from "../../src/bots/discord/discord-request-meter.js";
import { telegramRequestMeter } from "../../src/bots/telegram/telegram-request-meter.js";

let tg: FakeTelegram | undefined;
let discord: FakeDiscord | undefined;

afterEach(async () => {
  await tg?.close();
  await discord?.close();
  tg = discord = undefined;
});

async function counts(metrics: Metrics): Promise<Record<string, number>> {
  const metric = await metrics.platformRequests.get();
  return Object.fromEntries(
    metric.values.map((v) => [`${v.labels.platform}/${v.labels.kind}/${v.labels.outcome}`, v.value]),
  );
}

describe("Telegram request meter (grammY transformer)", () => {
  it("counts sends, edits, drafts and typing by outcome: ok, 429, refused, network failure, cancelled", async () => {
    // Pacing is not the subject here: the fake does not enforce flood limits.
    tg = await startFakeTelegram({ floodLimits: { mode: "off" } });
    const alice = { id: 4001, first_name: "Alice" };
    tg.addChat(privateChat(alice));
    const metrics = createMetrics();
    const api = new Api(tg.token, { apiRoot: tg.apiRoot });
    api.config.use(telegramRequestMeter(metrics));

    const sent = await api.sendMessage(alice.id, "one");
    await api.editMessageText(alice.id, sent.message_id, "two");
    await api.sendMessageDraft(alice.id, 1, "drafting");
    await api.sendChatAction(alice.id, "typing");
    tg.failNext("editMessageText", 1, { retryAfter: 3 });
    await expect(api.editMessageText(alice.id, sent.message_id, "three")).rejects.toBeInstanceOf(GrammyError);
    await expect(api.editMessageText(alice.id, 999_999, "nowhere")).rejects.toBeInstanceOf(GrammyError);
    tg.failNext("sendMessage", 1, { networkError: true });
    await expect(api.sendMessage(alice.id, "lost")).rejects.toBeInstanceOf(HttpError);
    const controller = new AbortController();
    controller.abort();
    await expect(api.sendMessage(alice.id, "never", {}, controller.signal as never)).rejects.toThrow();
    await api.getMe();

    expect(await counts(metrics)).toEqual({
      "telegram/send/ok": 1,
      "telegram/edit/ok": 1,
      "telegram/draft/ok": 1,
      "telegram/typing/ok": 1,
      "telegram/edit/rate_limited": 1,
      "telegram/edit/error": 1,
      "telegram/send/error": 1,
      "telegram/send/aborted": 1,
      "telegram/other/ok": 1,
    });
    // The fake agrees on what reached it: 2 edits answered ok or 429/400, the cancelled send never arrived.
    expect(tg.calls("editMessageText").map((c) => c.status)).toEqual([200, 429, 400]);
    expect(tg.calls("sendMessage").filter((c) => c.ok).length).toBe(1);
  });
});

describe("Discord request meter (the makeRequest under REST)", () => {
  it("counts message sends, edits and typing by outcome as the fake recorded them", async () => {
    discord = await startFakeDiscord();
    const metrics = createMetrics();
    const rest = createDiscordRestClient({
      token: discord.token,
      apiBase: discord.apiBase,
      makeRequest: meteredDiscordRequests(metrics),
    });
    const channel = discord.ids.general;

    const sent = await rest.request<{ id: string }>("POST", `/channels/${channel}/messages`, {
      body: { content: "one" },
    });
    await rest.request("PATCH", `/channels/${channel}/messages/${sent.id}`, { body: { content: "two" } });
    await rest.request("POST", `/channels/${channel}/typing`);
    discord.failNext({ route: "PATCH /channels/:id/messages/:id", status: 429, retryAfterMs: 10 });
    await expect(
      rest.request("PATCH", `/channels/${channel}/messages/${sent.id}`, { body: { content: "three" } }),
    ).rejects.toBeInstanceOf(RateLimitedError);
    // After the 429 the client holds the channel back itself: that refusal never reaches Discord, and is not counted.
    await expect(
      rest.request("PATCH", `/channels/${channel}/messages/${sent.id}`, { body: { content: "held" } }),
    ).rejects.toBeInstanceOf(RateLimitedError);
    const other = discord.ids.random;
    discord.failNext({ route: "POST /channels/:id/messages", status: 503 });
    await expect(rest.request("POST", `/channels/${other}/messages`, { body: { content: "lost" } })).rejects.toThrow(
      /503/,
    );
    await expect(
      rest.request("POST", `/channels/${other}/messages`, { body: { content: "never" }, signal: AbortSignal.abort() }),
    ).rejects.toThrow();
    await rest.request("GET", "/users/@me");

    expect(await counts(metrics)).toEqual({
      "discord/send/ok": 1,
      "discord/edit/ok": 1,
      "discord/typing/ok": 1,
      "discord/edit/rate_limited": 1,
      "discord/send/error": 1,
      "discord/send/aborted": 1,
      "discord/other/ok": 1,
    });
    expect(discord.requests.filter((r) => r.route === "PATCH /channels/:id/messages/:id").map((r) => r.status)).toEqual(
      [200, 429],
    );
  });

  it("reads the kind from the route", () => {
    const base = "http://127.0.0.1:1/api/v10";
    expect(discordRequestKind("POST", `${base}/channels/123/messages`)).toBe("send");
    expect(discordRequestKind("PATCH", `${base}/channels/123/messages/456`)).toBe("edit");
    expect(discordRequestKind("POST", `${base}/channels/123/typing`)).toBe("typing");
    expect(discordRequestKind("GET", `${base}/channels/123/messages`)).toBe("other");
    expect(discordRequestKind("DELETE", `${base}/channels/123/messages/456`)).toBe("other");
  });
});
