/**
 * Shared start-up as vitest fixtures. A test asks for the starters it needs
 * (`async ({ startTelegram }) => …`); whatever it starts through them is closed after the
 * test, last started first, whether the test passed or failed, so no file keeps its own
 * `let …; afterEach(close)` bookkeeping. Every closer runs even when an earlier one throws;
 * the failures are reported together afterwards.
 */
import { test } from "vitest";
import { startFakeTelegram, type FakeTelegram, type FakeTelegramOptions } from "../fakes/telegram-server.js";
import { startFakeDiscord, type FakeDiscord, type FakeDiscordOptions } from "../fakes/discord-server.js";
import { startFakeOpenAI, type FakeOpenAI } from "../fakes/openai-server.js";
import { startFakeWeb, type FakeWeb, type FakeWebOptions } from "../fakes/web-server.js";
import { startTelegramE2E, type TelegramE2E, type TelegramE2EOptions } from "../e2e/telegram-harness.js";
import { startDiscordE2E, type DiscordE2E, type DiscordE2EOptions } from "../e2e/discord-harness.js";
import { startStack, type Stack, type StackOptions } from "./stack.js";
import { createTestRedis, type TestRedis } from "./redis.js";
import { startPrivateRedis, type PrivateRedis } from "./private-redis.js";
import { spawnRole, type RoleProcess } from "./stack-process.js";

/** Anything a test starts that has to be stopped again. */
export interface Closable {
  close(): unknown;
}

/** The fixtures of `e2eTest`: each starter's result is closed after the test, in reverse start order. */
export interface E2EFixtures {
  /** Registers `thing` to be closed after the test (in reverse order of registration) and returns it, its `close` made once-only. */
  closeAfter: <T extends Closable>(thing: T) => T;
  /** The whole bot on Telegram against fakes (`startTelegramE2E`). */
  startTelegram: (options?: TelegramE2EOptions) => Promise<TelegramE2E>;
  /** The whole bot on Discord against fakes (`startDiscordE2E`). */
  startDiscord: (options?: DiscordE2EOptions) => Promise<DiscordE2E>;
  /** The fake Telegram Bot API alone. */
  fakeTelegram: (options?: FakeTelegramOptions) => Promise<FakeTelegram>;
  /** The fake Discord (REST + gateway) alone. */
  fakeDiscord: (options?: FakeDiscordOptions) => Promise<FakeDiscord>;
  /** The fake OpenAI-compatible model server. */
  fakeModel: (handlerOrOptions?: Parameters<typeof startFakeOpenAI>[0]) => Promise<FakeOpenAI>;
  /** A fake model server with default options, started for this test (`async ({ model }) => …`). */
  model: FakeOpenAI;
  /** The fake web (weather, news, pages). */
  fakeWeb: (options?: FakeWebOptions) => Promise<FakeWeb>;
  /** A fresh key prefix on the test Redis; every key under it is deleted after the test. */
  testRedis: (label?: string) => TestRedis;
  /** A private redis-server process of this test's own (for killing and restarting it). */
  privateRedis: (options?: { args?: string[] }) => Promise<PrivateRedis>;
  /** Bots and worker roles in this process (`startStack`). */
  startStack: (options: StackOptions) => Promise<Stack>;
  /** A role as a child process (`spawnRole`); after the test it is killed, or with `stop: "terminate"` asked to exit first. */
  spawnRole: (
    role: Parameters<typeof spawnRole>[0],
    env: Record<string, string>,
    options?: { stop?: "kill" | "terminate" },
  ) => Promise<RoleProcess>;
  /** One fake web for the whole file (started on first use); each test sees it with no requests recorded and no delays. */
  web: FakeWeb;
  /** The file's fake web itself; tests use `web`. */
  sharedWeb: FakeWeb;
}

/** How long a role asked to exit (SIGTERM) gets before it is killed. */
const TERMINATE_GRACE_MS = 5000;

/** Stops a role process: SIGKILL, or SIGTERM and SIGKILL only if it is still running after the grace time. */
async function stopRole(role: RoleProcess, stop: "kill" | "terminate"): Promise<void> {
  if (stop === "terminate") {
    role.kill("SIGTERM");
    const exited = await Promise.race([
      role.exited,
      new Promise((resolve) => setTimeout(resolve, TERMINATE_GRACE_MS, "timeout")),
    ]);
    if (exited !== "timeout") return;
  }
  role.kill("SIGKILL");
  await role.exited;
}

/** Runs every closer, last registered first, and throws once at the end if any failed. */
async function closeAll(closers: (() => unknown)[]): Promise<void> {
  const failures: unknown[] = [];
  for (const close of closers.reverse()) {
    try {
      await close();
    } catch (error) {
      failures.push(error);
    }
  }
  if (failures.length === 1) throw failures[0];
  if (failures.length > 1)
    throw new AggregateError(failures, `${failures.length} things failed to close after the test`);
}

/** A vitest `test` whose fixtures start fakes, Redis prefixes and stacks and stop them after the test. */
export const e2eTest = test.extend<E2EFixtures>({
  // vitest reads a fixture's dependencies from its destructured first parameter, so the empty pattern is needed.
  closeAfter: async ({}, use) => {
    const closers: (() => unknown)[] = [];
    await use((thing) => {
      // A test may stop something itself (an adapter restart); closing it again afterwards must be a no-op.
      const close = thing.close.bind(thing);
      let closing: Promise<unknown> | undefined;
      thing.close = () => (closing ??= Promise.resolve().then(close));
      closers.push(() => thing.close());
      return thing;
    });
    await closeAll(closers);
  },
  startTelegram: async ({ closeAfter }, use) => {
    await use(async (options) => closeAfter(await startTelegramE2E(options)));
  },
  startDiscord: async ({ closeAfter }, use) => {
    await use(async (options) => closeAfter(await startDiscordE2E(options)));
  },
  fakeTelegram: async ({ closeAfter }, use) => {
    await use(async (options) => closeAfter(await startFakeTelegram(options)));
  },
  fakeDiscord: async ({ closeAfter }, use) => {
    await use(async (options) => closeAfter(await startFakeDiscord(options)));
  },
  fakeModel: async ({ closeAfter }, use) => {
    await use(async (handlerOrOptions) => closeAfter(await startFakeOpenAI(handlerOrOptions)));
  },
  model: async ({ fakeModel }, use) => {
    await use(await fakeModel());
  },
  fakeWeb: async ({ closeAfter }, use) => {
    await use(async (options) => closeAfter(await startFakeWeb(options)));
  },
  testRedis: async ({ closeAfter }, use) => {
    await use((label) => {
      const redis = createTestRedis(label);
      closeAfter({ close: () => redis.cleanup() });
      return redis;
    });
  },
  privateRedis: async ({ closeAfter }, use) => {
    await use(async (options) => closeAfter(await startPrivateRedis(options)));
  },
  startStack: async ({ closeAfter }, use) => {
    await use(async (options) => closeAfter(await startStack(options)));
  },
  sharedWeb: [
    async ({}, use) => {
      const web = await startFakeWeb();
      await use(web);
      await web.close();
    },
    { scope: "file" },
  ],
  web: async ({ sharedWeb }, use) => {
    // The delays this test set are taken back afterwards, so the next test starts from a quick web.
    const delayed = new Set<string>();
    await use({
      ...sharedWeb,
      setDelay(pathPrefix, ms) {
        delayed.add(pathPrefix);
        sharedWeb.setDelay(pathPrefix, ms);
      },
    });
    for (const pathPrefix of delayed) sharedWeb.setDelay(pathPrefix, 0);
    sharedWeb.requests.length = 0;
  },
  spawnRole: async ({ closeAfter }, use) => {
    await use(async (role, env, options) => {
      const child = await spawnRole(role, env);
      closeAfter({ close: () => stopRole(child, options?.stop ?? "kill") });
      return child;
    });
  },
});
