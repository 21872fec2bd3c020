/// <reference lib="dom" />
/**
 * The web chat is no slower than Telegram's native streaming: one deployment with both (a real
 * worker, the fake Bot API with drafts in a private chat, the web chat in Chromium) gets the same
 * answer for a question asked on each at the same moment, and the first answer word is timed
 * from the moment its model request arrived to the moment it is on screen: in the page (a
 * MutationObserver reporting to the test) and in a Telegram draft (the fake's arrival log).
 */
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOpsServer } from "../../src/observability/http-server.js";
import { paced, startFakeOpenAI, textAnswer, type FakeOpenAI } from "../fakes/openai-server.js";
import { privateChat, startFakeTelegram, type FakeTelegram, type FakeUser } from "../fakes/telegram-server.js";
import { startStack, type Stack } from "../support/stack.js";
import { launchChromium, type TestBrowser } from "./chromium.js";
import { ask, buildWebBundle, signIn, USER } from "./web-harness.js";

const alice: FakeUser = { id: 2001, first_name: "Alice", language_code: "en" };
const FIRST_WORD = "Gamma";
/**
 * The page is timed when the word is in its DOM, Telegram when the draft request reaches the Bot API
 * (its app still has to fetch and draw it): a web path a few tens of ms behind that is level, not slower.
 * Measured here: web 250–350 ms, draft 235–310 ms after the model request, on two shared cores.
 */
const TOLERANCE_MS = 100;

let bundle: { dir: string; remove(): void };
let browser: TestBrowser;
let tg: FakeTelegram;
let model: FakeOpenAI;
let stack: Stack;
let server: Server;
let base = "";

beforeAll(async () => {
  bundle = await buildWebBundle();
  tg = await startFakeTelegram();
  model = await startFakeOpenAI();
  stack = await startStack({
    env: {
      TELEGRAM_BOT_TOKEN: tg.token,
      TELEGRAM_API_ROOT: tg.apiRoot,
      OPENAI_BASE_URL: model.url,
      WEB_CHAT: "on",
      WEB_USERS: `${USER.name}:${USER.password}`,
      ENABLE_THINKING: "false",
    },
    bots: { webAssetsDir: bundle.dir },
  });
  server = await startOpsServer({
    port: 0,
    host: "127.0.0.1",
    registry: stack.metrics.registry,
    checks: [],
    ...(stack.bots?.web ? { web: stack.bots.web } : {}),
  });
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  stack?.bots?.web?.close();
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  await stack?.close();
  await Promise.allSettled([tg?.close(), model?.close()]);
  bundle?.remove();
});

describe("first answer word, web page against Telegram draft", () => {
  it("shows the first word in the page no later than in the Telegram draft", async () => {
    const page = await browser.context.newPage();
    await signIn(page, base, USER.name, USER.password);
    // Read in the page (the same machine's clock as the fakes'), so no round trip to the test is counted.
    await page.evaluate((word) => {
      const w = window as unknown as { firstWordAt?: number };
      new MutationObserver(() => {
        if (document.querySelector(".answer .text")?.textContent?.includes(word)) w.firstWordAt ??= Date.now();
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
    }, FIRST_WORD);
    const shownAt = () => page.evaluate(() => (window as unknown as { firstWordAt?: number }).firstWordAt);

    const answer = `${FIRST_WORD} delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma.`;
    model.script([paced(textAnswer(answer), 14), paced(textAnswer(answer), 14)]);
    await Promise.all([
      ask(page, "web: say the letters"),
      tg.userSays(privateChat(alice), alice, "tg: say the letters"),
    ]);

    const requestOf = (prefix: string) =>
      model.requests.find((r) =>
        (r.body.messages ?? []).some((m) => m.role === "user" && String(m.content).startsWith(prefix)),
      );
    await expect.poll(shownAt, { timeout: 20_000 }).toBeDefined();
    const telegramDraft = () =>
      tg
        .requests()
        .find(
          (r) =>
            Number(r.params.chat_id) === alice.id &&
            r.method === "sendMessageDraft" &&
            String(r.params.text ?? "").includes(FIRST_WORD),
        );
    await expect.poll(telegramDraft, { timeout: 20_000 }).toBeDefined();

    const web = (await shownAt())! - requestOf("web:")!.receivedAt;
    const telegram = telegramDraft()!.at - requestOf("tg:")!.receivedAt;
    // Both measured from their own model request: the queue's order does not count, only the way out.
    expect(web, `web ${web} ms, telegram draft ${telegram} ms`).toBeLessThanOrEqual(telegram + TOLERANCE_MS);
    await page.locator(".turn.done").waitFor({ timeout: 20_000 });
  });
});
