/**
 * Debian's Chromium driven by playwright-core, the way the ops tests need it: headless, no
 * sandbox (root in CI), nothing fetched from the network, a fresh profile per launch. A
 * missing browser is a test failure with the fix in the message, never a skip.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext } from "playwright-core";

/** Where Debian's `chromium` package puts the browser. */
export const CHROMIUM_PATH = "/usr/bin/chromium";

const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** A running browser with its own profile directory. */
export interface TestBrowser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** Launches Chromium with a fresh --user-data-dir; throws a clear error when it is not installed. */
export async function launchChromium(): Promise<TestBrowser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `Chromium is not installed at ${CHROMIUM_PATH}: the dashboard test needs a real browser. ` +
        "Install Debian's package: apt-get install -y chromium (.ci/run does this on a clean machine).",
    );
  }
  const profile = mkdtempSync(join(tmpdir(), "chatbot-chromium-"));
  try {
    // launchPersistentContext is how Playwright takes a --user-data-dir of our choosing.
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM_PATH,
      headless: true,
      args: ARGS,
      // A first launch on a machine that has just run the whole suite (cold page cache, two busy cores) was
      // seen to take over 15 s; a launch that slow is the machine, not the dashboard under test.
      timeout: 60_000,
    });
    return {
      context,
      async close() {
        await context.close();
        rmSync(profile, { recursive: true, force: true });
      },
    };
  } catch (error) {
    rmSync(profile, { recursive: true, force: true });
    throw error;
  }
}
