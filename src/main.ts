/**
 * Entry point: `node dist/main.js [all|bots|worker|chat|doctor|--help]` (app/cli-usage.ts says what each does).
 * Each role and command is imported only when it runs: the bots role must not carry the worker's model client,
 * tools and MCP SDK, nor the worker discord.js, nor either Express without ADMIN_TOKEN (megabytes each).
 */
import type { Server } from "node:http";
import { loadConfigOrExit } from "./config/load-config.js";
import type { Config } from "./config/env-schema.js";
import { connectRedis, RedisUnavailableError } from "./redis/connection.js";
import { usage } from "./app/cli-usage.js";
import { createLogger, logFormatFor, type Logger } from "./observability/logger.js";
import { configuredSecrets } from "./security/configured-secrets.js";
import { createMetrics } from "./observability/metrics.js";
import { startOpsServer, type HealthCheck } from "./observability/http-server.js";
import { loadMcpConfigFile, mcpConfigSecrets, McpConfigError } from "./tools/mcp/mcp-config.js";
import { installProcessGuards } from "./app/process-guards.js";
import { timeoutSignal } from "./shared/deadline.js";

const ROLES = ["all", "bots", "worker", "chat"] as const;
type Role = (typeof ROLES)[number];
/** Commands that are not roles: they check or explain, then exit. */
const COMMANDS = ["doctor"] as const;

function fail(message: string, code = 2): never {
  process.stderr.write(message.endsWith("\n") ? message : `${message}\n`);
  process.exit(code);
}

/** Checks the model server answers (GET {base}/models). */
function modelCheck(config: Config): HealthCheck {
  return {
    name: "model",
    async check() {
      const res = await fetch(`${config.OPENAI_BASE_URL.replace(/\/+$/, "")}/models`, {
        headers: { authorization: `Bearer ${config.OPENAI_API_KEY}` },
        signal: timeoutSignal(2000),
      });
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
    },
  };
}

/** A bots process without a platform: it would idle, looking healthy. */
const NOTHING_TO_DO =
  "no platform token is set (TELEGRAM_BOT_TOKEN, DISCORD_BOT_TOKEN) and WEB_CHAT is off: this process has nothing to do. Put a token in .env and restart; npm run chat needs none";

async function main(): Promise<void> {
  const [first, ...rest] = process.argv.slice(2);
  if (first === "--help" || first === "-h" || first === "help") {
    process.stdout.write(usage(ROLES, COMMANDS));
    process.exit(0);
  }
  const role = (first ?? "all") as Role | (typeof COMMANDS)[number];
  if (!ROLES.includes(role as Role) && !COMMANDS.includes(role as (typeof COMMANDS)[number])) {
    fail(`Unknown role "${first}".\n\n${usage(ROLES, COMMANDS)}`);
  }
  const config = loadConfigOrExit();
  // A bad MCP servers file stops the process here, naming the server and the field, before anything starts.
  let mcpSecrets: string[] = [];
  if (config.MCP_CONFIG && role !== "bots" && role !== "doctor") {
    try {
      mcpSecrets = mcpConfigSecrets(loadMcpConfigFile(config.MCP_CONFIG));
    } catch (error) {
      if (error instanceof McpConfigError) fail(error.message, 1);
      throw error;
    }
  }
  if (role === "doctor") {
    const { doctorCommand } = await import("./doctor/run-doctor.js");
    const code = await doctorCommand(config, rest, (text) => process.stdout.write(text));
    // Exit once the report is flushed: the checks' keep-alive sockets must not hold the process open.
    process.stdout.write("", () => process.exit(code));
    return;
  }
  if (role === "chat") process.exit(await (await import("./app/chat-command.js")).chatCommand(config, rest));
  const logger: Logger = createLogger({
    level: config.LOG_LEVEL,
    name: role,
    secrets: [...configuredSecrets(config), ...mcpSecrets],
    format: logFormatFor(config.LOG_FORMAT, process.stderr.isTTY === true),
  });
  // From here on nothing unhandled crashes the role or reaches stderr unscrubbed.
  let onUncaught: (() => void) | undefined;
  installProcessGuards(logger, { onUncaughtException: () => (onUncaught ? onUncaught() : process.exit(1)) });
  const metrics = createMetrics({ defaults: true });

  let redis;
  try {
    redis = await connectRedis(config.REDIS_URL);
  } catch (error) {
    if (error instanceof RedisUnavailableError) fail(error.message, 1);
    throw error;
  }
  redis.on("error", (error: unknown) => logger.warn({ err: error }, "redis connection error"));

  const closers: (() => Promise<void>)[] = [];
  let shuttingDown = false;
  const shutdown = async (signal: string, code = 0) => {
    if (shuttingDown) return;
    shuttingDown = true;
    logger.info({ signal }, "shutting down");
    for (const close of closers.reverse()) {
      await close().catch((error: unknown) => logger.error({ err: error }, "error while shutting down"));
    }
    redis.disconnect();
    process.exit(code);
  };
  onUncaught = () => void shutdown("uncaught exception", 1);
  process.once("SIGTERM", () => void shutdown("SIGTERM"));
  process.once("SIGINT", () => void shutdown("SIGINT"));

  try {
    const bots =
      role === "all" || role === "bots"
        ? await (await import("./app/bots-role.js")).startBotsRole(config, redis, {
            logger,
            metrics,
            onFatal: (error) => {
              logger.fatal({ err: error }, "a platform adapter stopped for good");
              void shutdown("fatal", 1);
            },
          })
        : undefined;
    if (bots) closers.push(() => bots.close());
    const checks: HealthCheck[] = [{ name: "redis", check: async () => void (await redis.ping()) }];
    if (bots) checks.push(...bots.healthChecks);
    if (role === "all" || role === "worker") {
      const { startWorkerRole } = await import("./app/worker-role.js");
      const worker = await startWorkerRole(config, redis, { logger, metrics });
      closers.push(() => worker.close());
      checks.push(...worker.healthChecks);
    }
    if (role !== "bots") checks.push(modelCheck(config));
    if (bots && bots.platforms === 0 && !bots.web) {
      // Nothing will ever arrive: say so, rather than idle looking healthy.
      logger.warn(NOTHING_TO_DO);
      // A 503 naming why, so `docker compose ps` shows it unhealthy.
      if (role === "bots")
        checks.push({
          name: "platforms",
          detail: "no platform token set: nothing to do",
          check: async () => {
            throw new Error(NOTHING_TO_DO);
          },
        });
    }
    const server: Server = await startOpsServer({
      port: config.HTTP_PORT,
      registry: metrics.registry,
      checks,
      logger,
      ...(config.ADMIN_TOKEN
        ? {
            admin: {
              token: config.ADMIN_TOKEN,
              handler: (await import("./observability/admin-dashboard.js")).createAdminHandler(config, redis),
            },
          }
        : {}),
      ...(bots?.web ? { web: bots.web } : {}),
      ...(bots?.telegramWebhook ? { routes: [bots.telegramWebhook] } : {}),
    });
    closers.unshift(() => new Promise<void>((resolve) => server.close(() => resolve())));
    logger.info({ role, httpPort: config.HTTP_PORT }, "started");
  } catch (error) {
    logger.fatal({ err: error }, "could not start");
    await shutdown("startup failure", 1);
  }
}

void main();
