import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "src/**/*.test.ts", "bench/**/*.test.ts"],
    // The Chromium test runs with `npm run test:browser` (vitest.browser.config.ts): `npm test` needs only a Redis.
    exclude: ["test/browser/**", "**/node_modules/**"],
    globalSetup: ["test/support/redis-global-setup.ts"],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // Several suites spawn worker processes and fake servers; two cores on CI.
    maxWorkers: 2,
    pool: "forks",
  },
});
