import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "src/**/*.test.ts", "bench/**/*.test.ts"],
    globalSetup: ["test/support/redis-global-setup.ts"],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // Several suites spawn worker processes and fake servers; two cores on CI.
    maxWorkers: 2,
    pool: "forks",
  },
});
