import { defineConfig } from "vitest/config";

/** `npm run test:browser`: the queue dashboard and the web chat in Debian's headless Chromium (needs `chromium` and a Redis). */
export default defineConfig({
  test: {
    include: ["test/browser/**/*.test.ts"],
    globalSetup: ["test/support/redis-global-setup.ts"],
    // Above the browser's launch timeout (test/browser/chromium.ts) plus the steps of a case.
    testTimeout: 90_000,
    hookTimeout: 90_000,
    pool: "forks",
    maxWorkers: 1,
  },
});
