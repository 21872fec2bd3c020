/**
 * The doctor's Telegram and Discord checks against the fake Bot API and the fake
 * Discord REST: valid and rejected tokens, privacy mode stated, a webhook Telegram
 * cannot reach, the Message Content intent switched off, a bot invited nowhere.
 */
import { Api } from "grammy";
import { describe, expect } from "vitest";
import { checkTelegram } from "../../src/bots/telegram/telegram-setup-checks.js";
import { checkDiscord } from "../../src/bots/discord/discord-setup-checks.js";
import type { SetupFinding } from "../../src/contracts/setup-finding.js";
import { privateChat } from "../fakes/telegram-server.js";
import { e2eTest } from "../support/fixtures.js";
import { freePort } from "../support/tcp-relay.js";

const byCheck = (findings: SetupFinding[]) => new Map(findings.map((f) => [f.check, f]));

describe("doctor: Telegram", () => {
  e2eTest(
    "a valid token passes and privacy mode is stated (on: the bot still gets everything it answers)",
    async ({ fakeTelegram }) => {
      const tg = await fakeTelegram({ privacyMode: true });
      const found = byCheck(await checkTelegram({ token: tg.token, apiRoot: tg.apiRoot, httpPort: 9464 }));
      expect(found.get("token")).toMatchObject({
        status: "pass",
        detail: `token valid: @${tg.me.username} (id ${tg.me.id})`,
      });
      expect(found.get("privacy mode")).toMatchObject({
        status: "pass",
        detail:
          "privacy mode is on: in groups the bot receives commands, @mentions and replies to its own messages, which is all it answers",
      });
      expect(found.has("webhook")).toBe(false); // long polling: nothing to check
    },
  );

  e2eTest("privacy mode off is stated too", async ({ fakeTelegram }) => {
    const tg = await fakeTelegram({ privacyMode: false });
    const found = byCheck(await checkTelegram({ token: tg.token, apiRoot: tg.apiRoot, httpPort: 9464 }));
    expect(found.get("privacy mode")!.detail).toMatch(/^privacy mode is off: the bot receives every group message/);
  });

  e2eTest(
    "a rejected token fails with where to get the right one, and never shows the token",
    async ({ fakeTelegram }) => {
      const tg = await fakeTelegram();
      const wrong = `${tg.me.id}:AAWrongTokenWrongTokenWrongToken`;
      const findings = await checkTelegram({ token: wrong, apiRoot: tg.apiRoot, httpPort: 9464 });
      expect(findings).toEqual([
        {
          group: "Telegram",
          check: "token",
          status: "fail",
          detail: "TELEGRAM_BOT_TOKEN is rejected (401 Unauthorized)",
          fix: "copy the token again from @BotFather (/mybots → your bot → API Token)",
        },
      ]);
      expect(JSON.stringify(findings)).not.toContain("AAWrongToken");
    },
  );

  e2eTest(
    "webhook mode: a webhook Telegram cannot reach fails with Telegram's last error and what the URL needs",
    async ({ fakeTelegram }) => {
      const tg = await fakeTelegram({ webhookRetryDelayMs: 50 });
      const url = `http://127.0.0.1:${await freePort()}/telegram/hook`;
      await new Api(tg.token, { apiRoot: tg.apiRoot }).setWebhook(url);
      const alice = { id: 1001, first_name: "Alice" };
      tg.userSays(privateChat(alice), alice, "hi");
      await tg.waitFor(() => tg.webhookDeliveries().length > 0);
      const found = byCheck(
        await checkTelegram({ token: tg.token, apiRoot: tg.apiRoot, httpPort: 9464, webhookUrl: url }),
      );
      expect(found.get("webhook")!.status).toBe("fail");
      expect(found.get("webhook")!.detail).toBe(
        `Telegram's last delivery to ${url} failed 0 min ago: Connection refused (1 updates waiting)`,
      );
      expect(found.get("webhook")!.fix).toBe(
        "the URL must be public https on port 443, 80, 88 or 8443 with a valid certificate, forwarded to this machine's HTTP_PORT (9464) at the same path",
      );
    },
  );

  e2eTest("webhook mode: a webhook set to another URL fails; a healthy one passes", async ({ fakeTelegram }) => {
    const tg = await fakeTelegram();
    const api = new Api(tg.token, { apiRoot: tg.apiRoot });
    await api.setWebhook("https://old.example.org/hook");
    const mine = "https://bot.example.org/telegram";
    const other = byCheck(
      await checkTelegram({ token: tg.token, apiRoot: tg.apiRoot, httpPort: 9464, webhookUrl: mine }),
    );
    expect(other.get("webhook")).toMatchObject({
      status: "fail",
      detail: "Telegram delivers to https://old.example.org/hook, not to TELEGRAM_WEBHOOK_URL",
    });
    await api.setWebhook(mine);
    const healthy = byCheck(
      await checkTelegram({ token: tg.token, apiRoot: tg.apiRoot, httpPort: 9464, webhookUrl: mine }),
    );
    expect(healthy.get("webhook")).toMatchObject({
      status: "pass",
      detail: `Telegram delivers to ${mine} (0 updates waiting)`,
    });
  });
});

describe("doctor: Discord", () => {
  e2eTest("passes a bot with a valid token, the Message Content intent and a server", async ({ fakeDiscord }) => {
    const discord = await fakeDiscord();
    const found = byCheck(await checkDiscord({ token: discord.token, apiBase: discord.apiBase }));
    expect([...found.values()].map((f) => [f.check, f.status])).toEqual([
      ["token", "pass"],
      ["message content", "pass"],
      ["servers", "pass"],
    ]);
    expect(found.get("servers")!.detail).toMatch(/^in 1 server \(/);
  });

  e2eTest(
    "the Message Content intent switched off in the portal fails with where to switch it on",
    async ({ fakeDiscord }) => {
      const discord = await fakeDiscord({ privilegedIntents: [] });
      const found = byCheck(await checkDiscord({ token: discord.token, apiBase: discord.apiBase }));
      expect(found.get("message content")).toMatchObject({
        status: "fail",
        fix: "Developer Portal → your application → Bot → Privileged Gateway Intents → turn on Message Content Intent, and save",
      });
      expect(found.get("message content")!.detail).toMatch(/^the Message Content intent is not enabled/);
    },
  );

  e2eTest("a bot in no server fails with an invite link for this application", async ({ fakeDiscord }) => {
    const discord = await fakeDiscord({ notInAnyGuild: true });
    const found = byCheck(await checkDiscord({ token: discord.token, apiBase: discord.apiBase }));
    expect(found.get("servers")).toMatchObject({
      status: "fail",
      detail: "the bot is in no server yet, so nobody can talk to it",
    });
    expect(found.get("servers")!.fix).toBe(
      `invite it: https://discord.com/oauth2/authorize?client_id=${discord.world.applicationId}&scope=bot+applications.commands&permissions=274877975552`,
    );
  });

  e2eTest("a rejected token fails with where to reset it, and never shows the token", async ({ fakeDiscord }) => {
    const discord = await fakeDiscord();
    const findings = await checkDiscord({ token: "MTIz.wrong.tokenwrongtoken", apiBase: discord.apiBase });
    expect(findings).toEqual([
      {
        group: "Discord",
        check: "token",
        status: "fail",
        detail: "DISCORD_BOT_TOKEN is rejected (401 Unauthorized)",
        fix: "Developer Portal → your application → Bot → Reset Token, and put the new one in DISCORD_BOT_TOKEN",
      },
    ]);
  });
});
