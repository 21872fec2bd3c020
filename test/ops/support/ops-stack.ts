/**
 * The bot in this test process as an operator runs it: the bots and worker roles on
 * real Redis, their metrics served by the ops HTTP server, and every log line the
 * process would print captured from the logger's destination (as main.ts builds it,
 * with the same secrets to scrub).
 */
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import { Redis } from "ioredis";
import { loadConfig } from "../../../src/config/load-config.js";
import type { Config } from "../../../src/config/env-schema.js";
import { startBotsRole, type BotsRole } from "../../../src/app/bots-role.js";
import { startWorkerRole, type WorkerRole, type WorkerRoleOptions } from "../../../src/app/worker-role.js";
import { createLogger } from "../../../src/observability/logger.js";
import { createMetrics, type Metrics } from "../../../src/observability/metrics.js";
import { startOpsServer } from "../../../src/observability/http-server.js";
import { createTestRedis, type TestRedis } from "../../support/redis.js";

/** Log lines as written to the destination: raw text and parsed JSON. */
export interface LogCapture {
  raw(): string;
  lines(): Record<string, unknown>[];
}

/** A running in-process bot with its ops server. */
export interface OpsStack {
  config: Config;
  redis: TestRedis;
  metrics: Metrics;
  logs: LogCapture;
  /** Base URL of the ops server (/healthz, /metrics). */
  opsUrl: string;
  bots: BotsRole;
  worker: WorkerRole;
  close(): Promise<void>;
}

function captureDestination(): { stream: Writable; logs: LogCapture } {
  let text = "";
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, callback) {
      text += chunk.toString();
      callback();
    },
  });
  return {
    stream,
    logs: {
      raw: () => text,
      lines: () =>
        text
          .split("\n")
          .filter((l) => l.trim() !== "")
          .map((l) => JSON.parse(l) as Record<string, unknown>),
    },
  };
}

/** Starts worker and bots roles against the given environment (REDIS_URL and KEY_PREFIX are filled in). */
export async function startOpsStack(opts: {
  env: Record<string, string>;
  worker?: WorkerRoleOptions;
  logLevel?: string;
}): Promise<OpsStack> {
  const redis = createTestRedis("ops");
  const config = loadConfig({ REDIS_URL: redis.url, KEY_PREFIX: redis.prefix, HTTP_PORT: "0", ...opts.env });
  const { stream, logs } = captureDestination();
  const logger = createLogger({
    level: opts.logLevel ?? "info",
    name: "all",
    // The same secrets main.ts hands the logger.
    secrets: [config.OPENAI_API_KEY, config.TELEGRAM_BOT_TOKEN, config.DISCORD_BOT_TOKEN, config.ADMIN_TOKEN],
    destination: stream,
  });
  const metrics = createMetrics({ defaults: false });
  const connection = new Redis(config.REDIS_URL, { maxRetriesPerRequest: null });
  let worker: WorkerRole | undefined;
  let bots: BotsRole | undefined;
  let server: Server | undefined;
  const close = async () => {
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    await bots?.close();
    await worker?.close(0);
    connection.disconnect();
    await redis.cleanup();
  };
  try {
    worker = await startWorkerRole(config, connection, { logger, metrics }, opts.worker);
    bots = await startBotsRole(config, connection, { logger, metrics });
    server = await startOpsServer({ port: 0, host: "127.0.0.1", registry: metrics.registry, checks: [] });
  } catch (error) {
    await close();
    throw error;
  }
  return {
    config,
    redis,
    metrics,
    logs,
    opsUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    bots,
    worker,
    close,
  };
}
