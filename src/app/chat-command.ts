/**
 * `npm run chat [-- --wait-for-model]`: what the terminal chat needs before the first prompt, each problem in
 * one line: a Redis (a private one when none answers), the model server, and logs kept off the conversation.
 */
import type { Redis } from "ioredis";
import type { Config } from "../config/env-schema.js";
import { connectRedis, RedisUnavailableError, safeUrl } from "../redis/connection.js";
import { createLogger } from "../observability/logger.js";
import { installProcessGuards } from "./process-guards.js";
import { createMetrics } from "../observability/metrics.js";
import { configuredSecrets } from "../security/configured-secrets.js";
import { showStatus, type TerminalScreen } from "../bots/terminal/terminal-reply-port.js";
import { checkModelAnswers } from "../doctor/model-checks.js";
import { createChatLogSink } from "./chat-log-sink.js";
import { RedisServerMissingError, startPrivateRedisServer, type PrivateRedisServer } from "./private-redis-server.js";
import { runTerminalChat } from "./chat-role.js";

const GET_REDIS =
  "Install one (Debian/Ubuntu: sudo apt-get install redis-server; macOS: brew install redis), run one (docker run -d -p 6379:6379 redis:7-alpine), or set REDIS_URL.";

/** Lines for the person at the terminal (stderr, so piped answers on stdout stay clean). */
function notice(text: string): void {
  process.stderr.write(`${text}\n`);
}

/** Connects to REDIS_URL, or starts a private redis-server when nothing answers there. */
async function redisForSession(
  config: Config,
): Promise<{ redis: Redis; url: string; owned?: PrivateRedisServer } | undefined> {
  try {
    return { redis: await connectRedis(config.REDIS_URL, 2000), url: config.REDIS_URL };
  } catch (error) {
    if (!(error instanceof RedisUnavailableError)) throw error;
  }
  let owned: PrivateRedisServer;
  try {
    owned = await startPrivateRedisServer();
  } catch (error) {
    const why =
      error instanceof RedisServerMissingError
        ? "and there is no redis-server on PATH"
        : `and a private redis-server did not start (${(error as Error).message})`;
    notice(`✗ No Redis answers at ${safeUrl(config.REDIS_URL)} ${why}. ${GET_REDIS}`);
    return undefined;
  }
  notice(
    `ℹ No Redis answers at ${safeUrl(config.REDIS_URL)}: started a private redis-server on 127.0.0.1:${owned.port} for this session (forgotten when you leave).`,
  );
  return { redis: await connectRedis(owned.url, 2000), url: owned.url, owned };
}

/** Says in one line when the model server does not answer, and how to start one; true when it answers. */
async function announceModelServer(config: Config): Promise<boolean> {
  const { finding } = await checkModelAnswers(config, 2000);
  if (finding.status !== "fail") return true;
  notice(`⚠ ${finding.detail}. To chat, ${finding.fix}. You can type already; answers need the server.`);
  return false;
}

/** After an answer gave up: why, and what to do, in one line (the answer itself only says "unavailable"). */
async function explainGiveUp(config: Config, reason: string): Promise<void> {
  const { finding } = await checkModelAnswers(config, 2000);
  notice(
    finding.status === "fail"
      ? `⚠ ${finding.detail}. To chat, ${finding.fix}.`
      : `⚠ The model did not answer (${reason}); it answers again now: send your message once more.`,
  );
}

/** Waits until the model server answers, the wait shown as one status line (redrawn on a TTY, every 30 s otherwise). */
async function waitForModelServer(config: Config, screen: TerminalScreen): Promise<void> {
  const startedAt = Date.now();
  let lastPlainLineAt = -Infinity;
  // Ctrl-C while waiting leaves at once (as PID 1 in a container, Node would otherwise ignore it).
  const leave = () => process.exit(130);
  process.once("SIGINT", leave);
  try {
    for (;;) {
      const { finding } = await checkModelAnswers(config, 2000);
      if (finding.status === "pass") {
        if (Date.now() - startedAt < 2500) return;
        const ready = `✓ The model server answers at ${config.OPENAI_BASE_URL}.`;
        if (!screen.out.isTTY) return notice(ready);
        // The wait line turns into this one and stays: later status lines start below it.
        showStatus(screen, ready);
        screen.status = undefined;
        return;
      }
      const seconds = Math.round((Date.now() - startedAt) / 1000);
      const line = `⏳ Waiting for the model server (${finding.detail}; ${seconds} s). Its first start downloads the model (about 2 GB): docker compose logs -f model shows the progress.`;
      if (screen.out.isTTY) showStatus(screen, line);
      else if (Date.now() - lastPlainLineAt >= 30_000) {
        notice(line);
        lastPlainLineAt = Date.now();
      }
      await new Promise((resolve) => setTimeout(resolve, 2000));
    }
  } finally {
    process.removeListener("SIGINT", leave);
  }
}

/** Runs the terminal chat command; resolves with the exit code. */
export async function chatCommand(config: Config, args: readonly string[]): Promise<number> {
  const out = process.stdout;
  const screen: TerminalScreen = {
    out: {
      write: (text) => void out.write(text),
      isTTY: out.isTTY === true,
      // Read at every redraw: the window may have been resized since.
      get columns() {
        return out.columns;
      },
    },
    nextId: 1,
  };
  // Explanations still being written when the chat ends are awaited: piped runs end right after the answer.
  const explaining = new Set<Promise<void>>();
  const sink = createChatLogSink({
    attempts: config.QUEUE_ATTEMPTS,
    listener: {
      onRetry: (attempt, attempts, reason) => {
        const line = `⏳ The model did not answer (${reason}); retrying, attempt ${attempt + 1} of ${attempts}…`;
        if (screen.out.isTTY) showStatus(screen, line);
        else notice(line);
      },
      onGiveUp: (reason) => {
        const done = explainGiveUp(config, reason).finally(() => explaining.delete(done));
        explaining.add(done);
      },
      onProblem: (text) => notice(`⚠ ${text}`),
    },
  });
  const logger = createLogger({
    level: config.LOG_LEVEL,
    name: "chat",
    secrets: configuredSecrets(config),
    destination: sink.destination,
  });
  if (sink.path) notice(`Logs: ${sink.path}`);
  // Like every role: nothing unhandled crashes the chat or reaches the terminal unscrubbed.
  const removeGuards = installProcessGuards(logger);
  try {
    const session = await redisForSession(config);
    if (!session) return 1;
    session.redis.on("error", (error: unknown) => logger.warn({ err: error }, "redis connection error"));
    try {
      let modelAnswers = true;
      if (args.includes("--wait-for-model")) await waitForModelServer(config, screen);
      else modelAnswers = await announceModelServer(config);
      await runTerminalChat(
        // A server known to be down is not retried per message: the answer gives up at once, the line under it says why.
        { ...config, REDIS_URL: session.url, ...(modelAnswers ? {} : { QUEUE_ATTEMPTS: 1 }) },
        session.redis,
        { logger, metrics: createMetrics({ defaults: false }) },
        screen,
      );
      await Promise.all(explaining);
    } finally {
      session.redis.disconnect();
      await session.owned?.stop();
    }
    return 0;
  } finally {
    removeGuards();
    sink.close();
  }
}
