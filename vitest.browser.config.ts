import { defineConfig } from "vitest/config";

/** `npm run test:browser`: the queue dashboard in Debian's headless Chromium (needs `chromium` and a Redis). */
export default defineConfig({
  test: {
    include: ["test/browser/**/*.test.ts"],
    globalSetup: ["test/support/redis-global-setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    maxWorkers: 1,
  },
});
