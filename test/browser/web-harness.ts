/**
 * The web chat as a user meets it: the page bundle built by esbuild the way `npm run build:web`
 * does, the bots and worker roles on a real Redis, the ops HTTP server serving the chat, the fake
 * model server and the fake web (weather, news, article pages), and a signed-in Chromium page.
 */
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "esbuild";
import type { Page } from "playwright-core";
import { startOpsServer } from "../../src/observability/http-server.js";
import { startFakeOpenAI, type FakeOpenAI } from "../fakes/openai-server.js";
import { startFakeWeb, type FakeWeb } from "../fakes/web-server.js";
import { startStack, type Stack } from "../support/stack.js";

/** The admin's password (ADMIN_TOKEN) and a web user's. */
export const ADMIN_TOKEN = "web-Adm1n-token-0123456789";
export const USER = { name: "ada", password: "ada-pass-word-1" };
export const OTHER = { name: "bob", password: "bob-pass-word-2" };

/** Builds the page bundle into a fresh directory (the same entry and options as `npm run build:web`). */
export async function buildWebBundle(): Promise<{ dir: string; remove(): void }> {
  const dir = mkdtempSync(join(tmpdir(), "chatbot-web-"));
  await build({
    entryPoints: ["web/main.ts"],
    bundle: true,
    format: "esm",
    target: "es2020",
    outfile: join(dir, "app.js"),
    logLevel: "silent",
  });
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A running web chat. */
export interface WebRig {
  base: string;
  model: FakeOpenAI;
  web: FakeWeb;
  stack: Stack;
  close(): Promise<void>;
}

/** Starts the fakes, both roles and the HTTP server with the web chat on. */
export async function startWebRig(assetsDir: string, env: Record<string, string> = {}): Promise<WebRig> {
  const model = await startFakeOpenAI();
  const web = await startFakeWeb();
  const stack = await startStack({
    env: {
      WEB_CHAT: "on",
      WEB_USERS: `${USER.name}:${USER.password},${OTHER.name}:${OTHER.password}`,
      ADMIN_TOKEN,
      OPENAI_BASE_URL: model.url,
      WEATHER_API_BASE: web.url,
      NEWS_RSS_URL: `${web.url}/rss?q={query}`,
      READ_URL_ALLOW_HOSTS: web.host,
      ...env,
    },
    bots: { webAssetsDir: assetsDir },
  });
  const redis = stack.redis;
  const server: Server = await startOpsServer({
    port: 0,
    host: "127.0.0.1",
    registry: stack.metrics.registry,
    checks: [{ name: "redis", check: async () => void (await redis.redis.ping()) }],
    ...(stack.bots?.web ? { web: stack.bots.web } : {}),
  });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    model,
    web,
    stack,
    async close() {
      stack.bots?.web?.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await stack.close();
      await Promise.allSettled([model.close(), web.close()]);
    },
  };
}

/** Signs in through the form, as a person would. */
export async function signIn(page: Page, base: string, name: string, password: string): Promise<void> {
  await page.goto(`${base}/login`);
  await page.locator('input[name="name"]').fill(name);
  await page.locator('input[type="password"]').fill(password);
  await Promise.all([
    page.waitForURL((url) => url.pathname !== "/login"),
    page.getByRole("button", { name: "Sign in" }).click(),
  ]);
}

/** Sends a message from the chat box. */
export async function ask(page: Page, text: string): Promise<void> {
  await page.locator("textarea").fill(text);
  await page.getByRole("button", { name: "Send" }).click();
}
