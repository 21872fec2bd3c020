/**
 * The queue dashboard (bull-board at /admin/queues) as an operator meets it: in a real
 * headless Chromium, against the ops server with the admin handler on a real queue that
 * holds messages enqueued the way the adapters do it.
 */
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Redis } from "ioredis";
import { startOpsServer } from "../../src/observability/http-server.js";
import { createAdminHandler } from "../../src/observability/admin-dashboard.js";
import { createMetrics } from "../../src/observability/metrics.js";
import { createMessageQueue, type MessageQueue } from "../../src/queue/message-queue.js";
import type { InboundMessage } from "../../src/contracts/inbound-message.js";
import { createTestRedis, type TestRedis } from "../support/redis.js";
import { launchChromium, type TestBrowser } from "./chromium.js";
import { inboundMessage } from "../support/inbound-message.js";

const TOKEN = "dash-Adm1n-token-0123456789";

let testRedis: TestRedis | undefined;
let connection: Redis | undefined;
let queue: MessageQueue | undefined;
let server: Server | undefined;
let browser: TestBrowser | undefined;
let base = "";

function message(chat: number, messageId: number, text: string): InboundMessage {
  return inboundMessage({
    chatId: String(chat),
    messageId: String(messageId),
    author: { id: String(chat), displayName: `User ${chat}` },
    text,
  });
}

beforeEach(async () => {
  testRedis = createTestRedis("dash");
  connection = new Redis(testRedis.url, { maxRetriesPerRequest: null });
  queue = createMessageQueue({ connection, prefix: testRedis.prefix });
  // Three conversations (each head is a BullMQ job) and a second message queued behind the first.
  for (const m of [
    message(501, 11, "weather in Paris?"),
    message(502, 12, "news about rust"),
    message(503, 13, "what time is it"),
    message(501, 14, "and tomorrow?"),
  ]) {
    expect((await queue.enqueue(m)).status).toBe("queued");
  }
  server = await startOpsServer({
    port: 0,
    host: "127.0.0.1",
    registry: createMetrics().registry,
    checks: [],
    admin: { token: TOKEN, handler: createAdminHandler({ KEY_PREFIX: testRedis.prefix }, connection) },
  });
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await launchChromium();
});

afterEach(async () => {
  await browser?.close();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  await queue?.close();
  connection?.disconnect();
  await testRedis?.cleanup();
  browser = undefined;
  server = undefined;
});

describe("queue dashboard in Chromium", () => {
  it("opens with the token, lists the queue and its waiting jobs, and keeps the token out of the address bar", async () => {
    const page = await browser!.context.newPage();
    const response = await page.goto(`${base}/admin/queues?token=${TOKEN}`);
    expect(response?.status()).toBe(200);
    // The token link was traded for a cookie: the address bar no longer shows it.
    expect(page.url()).toBe(`${base}/admin/queues`);

    const card = page.getByText(`${testRedis!.prefix} messages`);
    await card.first().waitFor({ timeout: 10_000 });
    await expect(page.title()).resolves.toBe("chatbot queues");
    // The waiting tab counts the three conversation heads (the fourth message waits behind its conversation).
    await page
      .getByRole("link", { name: /waiting\s*3/i })
      .first()
      .waitFor({ timeout: 10_000 });

    await page.goto(`${base}/admin/queues/queue/inbound?status=waiting`);
    for (const id of ["telegram-501-11", "telegram-502-12", "telegram-503-13"]) {
      await page.getByText(id).first().waitFor({ timeout: 10_000 });
    }
    // The newest job is open: its payload is the user's message as queued.
    await page.getByText("what time is it").first().waitFor({ timeout: 10_000 });
    const body = await page.locator("body").innerText();
    expect(body).not.toContain("telegram-501-14");
    expect(body).not.toContain(TOKEN);
  });

  it("without the token answers 401 and shows no dashboard, not even its API", async () => {
    const page = await browser!.context.newPage();
    const response = await page.goto(`${base}/admin/queues`);
    expect(response?.status()).toBe(401);
    const text = await page.locator("body").innerText();
    expect(text).toContain("401 Unauthorized");
    expect(text).not.toContain("chatbot queues");
    expect(text).not.toContain(testRedis!.prefix);

    const api = await page.goto(`${base}/admin/queues/api/queues?page=1&jobsPerPage=10`);
    expect(api?.status()).toBe(401);
    expect(await page.locator("body").innerText()).not.toContain("telegram-501-11");
  });

  it("with a wrong token answers 401 and sets no cookie", async () => {
    const page = await browser!.context.newPage();
    const response = await page.goto(`${base}/admin/queues?token=not-the-${TOKEN}`);
    expect(response?.status()).toBe(401);
    expect(await page.locator("body").innerText()).not.toContain("chatbot queues");
    expect(await browser!.context.cookies()).toEqual([]);

    // The right token afterwards still opens it, even over a stale cookie from an older token.
    await browser!.context.addCookies([{ name: "admin_token", value: "an-old-token", url: `${base}/admin/queues` }]);
    const retry = await page.goto(`${base}/admin/queues?token=${TOKEN}`);
    expect(retry?.status()).toBe(200);
    await page.getByText(`${testRedis!.prefix} messages`).first().waitFor({ timeout: 10_000 });
  });
});
