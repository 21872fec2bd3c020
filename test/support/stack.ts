/**
 * The whole bot in this test process: real config parsing, real Redis, the
 * bots role (adapters + gateway) and the worker role, pointed at whichever
 * fakes the test started. Child-process variants are in stack-process.ts.
 */
import { Redis } from "ioredis";
import { loadConfig } from "../../src/config/load-config.js";
import type { Config } from "../../src/config/env-schema.js";
import { startBotsRole, type BotsRole } from "../../src/app/bots-role.js";
import { startWorkerRole, type WorkerRole, type WorkerRoleOptions } from "../../src/app/worker-role.js";
import { createLogger } from "../../src/observability/logger.js";
import { createMetrics, type Metrics } from "../../src/observability/metrics.js";
import { createTestRedis, type TestRedis } from "./redis.js";

/** What a test asks of the stack. */
export interface StackOptions {
  /** Environment as an operator would set it (REDIS_URL and KEY_PREFIX are filled in). */
  env: Record<string, string>;
  /** Which roles run in this process (default both). */
  roles?: ("bots" | "worker")[];
  worker?: WorkerRoleOptions;
  /** Options of the bots role (the web chat's page bundle). */
  bots?: Parameters<typeof startBotsRole>[3];
  /** Reuse a prefix (e.g. to share a deployment with child processes). */
  redis?: TestRedis;
  logLevel?: string;
}

/** A running stack. */
export interface Stack {
  config: Config;
  redis: TestRedis;
  metrics: Metrics;
  bots?: BotsRole;
  worker?: WorkerRole;
  /** Environment a child process needs to join this deployment. */
  env: Record<string, string>;
  close(): Promise<void>;
}

/** Starts the roles in-process; `close` stops them and deletes every key under the test prefix. */
export async function startStack(opts: StackOptions): Promise<Stack> {
  const redis = opts.redis ?? createTestRedis("stack");
  const env: Record<string, string> = { REDIS_URL: redis.url, KEY_PREFIX: redis.prefix, HTTP_PORT: "0", ...opts.env };
  const config = loadConfig(env);
  const logger = createLogger({
    level: opts.logLevel ?? "silent",
    secrets: [config.TELEGRAM_BOT_TOKEN, config.DISCORD_BOT_TOKEN],
  });
  const metrics = createMetrics();
  const connection = new Redis(config.REDIS_URL, { maxRetriesPerRequest: null });
  const roles = opts.roles ?? ["bots", "worker"];
  let worker: WorkerRole | undefined;
  let bots: BotsRole | undefined;
  try {
    if (roles.includes("worker")) worker = await startWorkerRole(config, connection, { logger, metrics }, opts.worker);
    if (roles.includes("bots")) bots = await startBotsRole(config, connection, { logger, metrics }, opts.bots);
  } catch (error) {
    await worker?.close(0);
    connection.disconnect();
    if (!opts.redis) await redis.cleanup();
    throw error;
  }
  return {
    config,
    redis,
    metrics,
    ...(bots ? { bots } : {}),
    ...(worker ? { worker } : {}),
    env,
    async close() {
      await bots?.close();
      await worker?.close(0);
      connection.disconnect();
      if (!opts.redis) await redis.cleanup();
    },
  };
}
