/**
 * The bots role inside the benchmark process, wired like test/support/stack.ts:
 * real config parsing, its own Redis connection, the real adapters. Warnings are
 * counted (and the last one kept) instead of printed over the table.
 */
import { Writable } from "node:stream";
import { Redis } from "ioredis";
import { loadConfig } from "../src/config/load-config.js";
import { startBotsRole } from "../src/app/bots-role.js";
import { createLogger } from "../src/observability/logger.js";
import { createMetrics } from "../src/observability/metrics.js";

/** The running in-process bots role. */
export interface InProcessBots {
  /** Log lines at warn or above so far, and the last one. */
  readonly warnings: number;
  readonly lastWarning: string | undefined;
  close(): Promise<void>;
}

/** Starts the adapters for the platforms configured in `env`. */
export async function startBotsInProcess(env: Record<string, string>): Promise<InProcessBots> {
  const config = loadConfig(env);
  let warnings = 0;
  let lastWarning: string | undefined;
  const sink = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      warnings++;
      lastWarning = String(chunk).trim().slice(0, 400);
      done();
    },
  });
  const logger = createLogger({
    level: "warn",
    name: "bots",
    destination: sink,
    secrets: [config.TELEGRAM_BOT_TOKEN, config.DISCORD_BOT_TOKEN],
  });
  const connection = new Redis(config.REDIS_URL, { maxRetriesPerRequest: null });
  connection.on("error", () => undefined); // reported by the role's own checks; the run fails on timeouts
  try {
    const bots = await startBotsRole(config, connection, { logger, metrics: createMetrics() });
    return {
      get warnings() {
        return warnings;
      },
      get lastWarning() {
        return lastWarning;
      },
      async close() {
        await bots.close();
        connection.disconnect();
      },
    };
  } catch (error) {
    connection.disconnect();
    throw error;
  }
}
