/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * Who gets into the web chat and the console, in Chromium: wrong passwords are refused, slowed and
 * then throttled; nothing answers without a session; writes need the session's CSRF token; the
 * console and its API refuse a user who is not the admin; the admin's console lists every
 * platform's conversations, shows one read-only, changes its settings and resets it.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createHistoryStore } from "../../src/history/history-store.js";
import { textAnswer } from "../fakes/openai-server.js";
import { launchChromium, type TestBrowser } from "./chromium.js";
import { ADMIN_TOKEN, ask, buildWebBundle, signIn, startWebRig, USER, type WebRig } from "./web-harness.js";

let bundle: { dir: string; remove(): void };
let browser: TestBrowser;
let rig: WebRig;

beforeAll(async () => {
  bundle = await buildWebBundle();
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  bundle?.remove();
});
beforeEach(async () => {
  rig = await startWebRig(bundle.dir);
});
afterEach(async () => {
  for (const page of browser.context.pages()) await page.close();
  await browser.context.clearCookies();
  await rig?.close();
});

const signInForm = (name: string, password: string) =>
  fetch(`${rig.base}/login`, {
    method: "POST",
    body: new URLSearchParams({ name, password }),
    redirect: "manual",
    headers: { "sec-fetch-site": "same-origin" },
  });

describe("web chat access", () => {
  it("refuses a wrong password slowly, then throttles the address, and sets no session", async () => {
    const page = await browser.context.newPage();
    await page.goto(`${rig.base}/login`);
    await page.locator('input[name="name"]').fill(USER.name);
    await page.locator('input[type="password"]').fill("not-the-password");
    const started = Date.now();
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith("/login") && r.request().method() === "POST"),
      page.getByRole("button", { name: "Sign in" }).click(),
    ]);
    expect(response.status()).toBe(401);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    await page.getByText("Wrong name or password.").waitFor();
    expect(await browser.context.cookies()).toEqual([]);
    // The admin's name with a wrong token is no better.
    expect((await signInForm("admin", "wrong-admin-token-123456")).status).toBe(401);

    // Past five wrong tries a minute the address waits, even with the right password.
    for (let i = 0; i < 3; i++) expect((await signInForm(USER.name, `guess-${i}-password`)).status).toBe(401);
    const blocked = await signInForm(USER.name, USER.password);
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(blocked.headers.get("set-cookie")).toBeNull();
  });

  it("marks the session cookie Secure when the page came over HTTPS (through a proxy), not on plain HTTP", async () => {
    const signInVia = (proto?: string) =>
      fetch(`${rig.base}/login`, {
        method: "POST",
        body: new URLSearchParams({ name: USER.name, password: USER.password }),
        redirect: "manual",
        headers: { "sec-fetch-site": "same-origin", ...(proto ? { "x-forwarded-proto": proto } : {}) },
      });
    expect((await signInVia("https")).headers.get("set-cookie")).toMatch(/^sid=[^;]+;.*; Secure$/);
    expect((await signInVia()).headers.get("set-cookie")).toMatch(/^sid=[^;]+;/);
    expect((await signInVia()).headers.get("set-cookie")).not.toContain("Secure");
  });

  it("answers no page and no API without a session", async () => {
    const page = await browser.context.newPage();
    await page.goto(`${rig.base}/`);
    expect(new URL(page.url()).pathname).toBe("/login");
    await page.goto(`${rig.base}/console`);
    expect(new URL(page.url()).pathname).toBe("/login");
    for (const path of ["/api/me", "/api/events", "/api/admin/conversations", "/api/admin/tools"]) {
      const res = await fetch(`${rig.base}${path}`);
      expect([path, res.status]).toEqual([path, 401]);
    }
    for (const path of ["/api/send", "/api/stop", "/api/admin/reset"]) {
      const res = await fetch(`${rig.base}${path}`, { method: "POST", body: JSON.stringify({ text: "hi" }) });
      expect([path, res.status]).toEqual([path, 401]);
    }
    // A forged cookie is no session.
    const forged = await fetch(`${rig.base}/api/me`, { headers: { cookie: `sid=${"A".repeat(43)}` } });
    expect(forged.status).toBe(401);
    expect(rig.model.requests).toEqual([]);
  });

  it("takes no write without the CSRF token, and shows a user no console", async () => {
    const page = await browser.context.newPage();
    await signIn(page, rig.base, USER.name, USER.password);
    expect(new URL(page.url()).pathname).toBe("/");
    const cookie = (await browser.context.cookies()).find((c) => c.name === "sid");
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: "Strict" });
    expect(await page.evaluate(() => document.cookie)).toBe("");

    const statuses = await page.evaluate(async () => {
      const me = (await (await fetch("/api/me")).json()) as { csrf: string };
      const post = (path: string, csrf?: string) =>
        fetch(path, {
          method: "POST",
          headers: { "content-type": "application/json", ...(csrf ? { "x-csrf-token": csrf } : {}) },
          body: JSON.stringify({ text: "hello", key: "tg:1" }),
        }).then((r) => r.status);
      return {
        sendWithoutToken: await post("/api/send"),
        sendWrongToken: await post("/api/send", "x".repeat(32)),
        adminReset: await post("/api/admin/reset", me.csrf),
        adminList: (await fetch("/api/admin/conversations")).status,
      };
    });
    expect(statuses).toEqual({ sendWithoutToken: 403, sendWrongToken: 403, adminReset: 403, adminList: 403 });
    expect(rig.model.requests).toEqual([]);
    const consolePage = await page.goto(`${rig.base}/console`);
    expect(consolePage?.status()).toBe(403);
    expect(await page.locator("body").innerText()).toContain("the console is for the admin");
  });

  it("lets the admin list every platform's conversations, read one, change its settings and reset it", async () => {
    // A Telegram conversation, stored the way the worker stores it.
    const history = createHistoryStore({
      redis: rig.stack.redis.redis,
      prefix: rig.stack.config.KEY_PREFIX,
      maxMessages: 40,
      maxTokens: 6000,
      ttlSeconds: rig.stack.config.HISTORY_TTL_SECONDS,
    });
    await history.append("tg:4242", [
      { role: "user", content: "Alice: what's the weather in Paris?", name: "Alice" },
      { role: "assistant", content: "Sunny, 21°C." },
    ]);
    // And ada's web conversation, through the page.
    rig.model.script([textAnswer("Hello Ada.")]);
    const chat = await browser.context.newPage();
    await signIn(chat, rig.base, USER.name, USER.password);
    await ask(chat, "hello from the web");
    await chat.locator(".turn.done").waitFor({ timeout: 20_000 });
    // The page shows the answer before the worker stores the turn (its first token count loads the tokenizer).
    await expect.poll(async () => (await history.load("web:ada")).length, { timeout: 30_000 }).toBe(2);
    await chat.close();
    await browser.context.clearCookies();

    const page = await browser.context.newPage();
    await page.setViewportSize({ width: 900, height: 900 });
    await signIn(page, rig.base, "admin", ADMIN_TOKEN);
    expect(new URL(page.url()).pathname).toBe("/console");
    const rows = page.locator(".conversations tbody tr");
    await expect
      .poll(() => rows.allInnerTexts())
      .toEqual(
        expect.arrayContaining([
          expect.stringMatching(/^telegram\s+Alice: what's the weather in Paris\?\s+\d+ s ago\s+2$/),
          expect.stringMatching(/^web\s+hello from the web\s+\d+ s ago\s+2$/),
        ]),
      );
    await page.locator(".health p").first().waitFor();
    expect(await page.locator(".health").innerText()).toContain("The bot is healthy");
    await expect.poll(() => page.locator(".tools-panel").innerText()).toContain("get_weather");
    expect(await page.getByRole("link", { name: "Queue dashboard" }).getAttribute("href")).toBe("/admin/queues");

    await page.locator('tr[data-key="tg:4242"] button').click();
    await expect.poll(() => page.locator(".history").innerText()).toContain("Sunny, 21°C.");
    expect(await page.locator(".history li").count()).toBe(2);
    await expect.poll(() => page.locator(".settings-answer").innerText()).not.toBe("");
    if (process.env.WEB_SCREENSHOTS) await page.screenshot({ path: "docs/console.png" });

    await page.locator('input[name="command"]').fill("think off");
    await page.getByRole("button", { name: "Apply" }).click();
    await expect.poll(() => page.locator(".settings-answer").innerText()).toMatch(/think/i);
    const stored = await rig.stack.redis.redis.hgetall(`${rig.stack.config.KEY_PREFIX}:settings:tg:4242`);
    expect(Object.values(stored).join(" ")).toMatch(/false|off/);

    page.once("dialog", (dialog) => void dialog.accept());
    await page.getByRole("button", { name: "Reset this conversation" }).click();
    await expect.poll(() => page.locator(".history").innerText()).toContain("(no stored messages)");
    expect(await history.load("tg:4242")).toEqual([]);
    await expect.poll(() => page.locator('tr[data-key="tg:4242"]').count()).toBe(0);
  });
});
