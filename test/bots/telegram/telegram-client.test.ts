/**
 * The token is in the path of every Bot API request: a root that answers with a redirect (a misconfigured
 * proxy, a hijacked host) must not carry it to the other host. grammY's Api and Bot built with our client
 * options, and the doctor's Telegram check, refuse the redirect and say the API is unreachable.
 */
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Api, Bot, InputFile } from "grammy";
import { afterEach, describe, expect, it } from "vitest";
import { telegramClientOptions } from "../../../src/bots/telegram/telegram-client.js";
import { checkTelegram } from "../../../src/bots/telegram/telegram-setup-checks.js";
import { privateChat, startFakeTelegram } from "../../fakes/telegram-server.js";

const TOKEN = "123456:AAH-redirect-test-token";
const servers: Server[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

async function listen(handler: Parameters<typeof createServer>[1]): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Another host that answers like the Bot API and notes every path it was asked for. */
async function otherHost() {
  const paths: string[] = [];
  const url = await listen((req, res) => {
    paths.push(req.url ?? "");
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify({ ok: true, result: { id: 1, is_bot: true, first_name: "Thief", username: "thief_bot" } }));
  });
  return { url, paths };
}

describe("Telegram client options", () => {
  it.each([302, 307, 308])("a %i from the API root reaches no other host, and the call fails", async (status) => {
    const other = await otherHost();
    const root = await listen((req, res) => {
      res.writeHead(status, { location: `${other.url}${req.url}` }).end();
    });

    const refused = { error: expect.objectContaining({ message: expect.stringMatching(/redirect/i) }) };
    const failure = await new Api(TOKEN, telegramClientOptions(root)).getMe().catch((e: unknown) => e);
    expect(failure).toMatchObject(refused);
    expect(JSON.stringify(failure, Object.getOwnPropertyNames(failure))).not.toContain(TOKEN.split(":")[1]);
    expect(String((failure as { error: Error }).error.message)).not.toContain(TOKEN.split(":")[1]);
    const bot = new Bot(TOKEN, { client: telegramClientOptions(root) });
    await expect(bot.api.getMe()).rejects.toMatchObject(refused); // what bot.init() asks, again and again
    const findings = await checkTelegram({ token: TOKEN, apiRoot: root, httpPort: 9464 });
    expect(findings).toEqual([
      expect.objectContaining({ status: "fail", detail: expect.stringMatching(/cannot reach the Bot API/) }),
    ]);

    expect(other.paths).toEqual([]);
  });

  it("keeps the options it is given, and the API answers as before", async () => {
    const root = (await otherHost()).url;
    const options = telegramClientOptions(root, { timeoutSeconds: 10, baseFetchConfig: { compress: false } });
    expect(options).toMatchObject({
      apiRoot: root,
      timeoutSeconds: 10,
      baseFetchConfig: { compress: false, redirect: "error" },
    });
    await expect(new Api(TOKEN, options).getMe()).resolves.toMatchObject({ username: "thief_bot" });
  });

  it("uploads a file whole: grammY's multipart stream goes through the same client", async () => {
    const tg = await startFakeTelegram();
    try {
      const alice = { id: 1001, first_name: "Alice" };
      tg.userSays(privateChat(alice), alice, "hi");
      const bytes = Buffer.from(Array.from({ length: 70_000 }, (_, i) => i % 251));
      const api = new Api(tg.token, telegramClientOptions(tg.apiRoot));
      const sent = await api.sendVoice(alice.id, new InputFile(bytes, "answer.ogg"), { caption: "read aloud" });
      expect(sent.caption).toBe("read aloud");
      expect(tg.files.sentVoices).toEqual([expect.objectContaining({ chatId: alice.id, caption: "read aloud" })]);
      expect(Buffer.compare(tg.files.sentVoices[0]?.bytes ?? Buffer.alloc(0), bytes)).toBe(0);
    } finally {
      await tg.close();
    }
  });
});
