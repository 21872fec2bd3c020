/**
 * `npm run chat`: the terminal as a chat platform. The same gateway, queue and
 * worker as Discord and Telegram run in this process; the reply is redrawn in
 * place as it streams. No platform token needed.
 */
import { userInfo } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { queueKeys } from "../redis/keys.js";
import type { Redis } from "ioredis";
import type { Config } from "../config/env-schema.js";
import { runTerminalAdapter } from "../bots/terminal/terminal-adapter.js";
import { createTerminalReplyPortFactory, type TerminalScreen } from "../bots/terminal/terminal-reply-port.js";
import type { Logger } from "../observability/logger.js";
import type { Metrics } from "../observability/metrics.js";
import { startBotsRole } from "./bots-role.js";
import { startWorkerRole } from "./worker-role.js";

/** Runs a terminal conversation until end of input or /quit, waiting for the last answer; `screen` defaults to stdout. */
export async function runTerminalChat(
  config: Config,
  redis: Redis,
  deps: { logger: Logger; metrics: Metrics },
  screen: TerminalScreen = stdoutScreen(),
): Promise<void> {
  const out = process.stdout;
  const bots = await startBotsRole(config, redis, deps, { adapters: false });
  const worker = await startWorkerRole(config, redis, deps, {
    extraPorts: { terminal: createTerminalReplyPortFactory(screen) },
  });
  const user = userInfo().username || "you";
  if (out.isTTY)
    out.write(`Chatting with ${config.MODEL} at ${config.OPENAI_BASE_URL}. /help for commands, Ctrl-D to leave.\n`);
  const terminal = runTerminalAdapter({
    gateway: bots.gateway,
    settings: bots.settings,
    input: process.stdin,
    screen,
    session: user,
    userName: user,
    maxInputChars: config.MAX_INPUT_CHARS,
  });
  process.once("SIGINT", () => terminal.close());
  await terminal.done;
  // Let queued questions be answered before leaving (piped input ends before the answers do).
  await answersDrained(
    redis,
    config.KEY_PREFIX,
    `term:${user}`,
    config.MODEL_TIMEOUT_MS * (config.MAX_TOOL_ROUNDS + 1),
  );
  await worker.close();
  await bots.close();
}

function stdoutScreen(): TerminalScreen {
  const out = process.stdout;
  return { out: { write: (text) => void out.write(text), isTTY: out.isTTY === true, columns: out.columns }, nextId: 1 };
}

/** Waits until the conversation has nothing queued or running (its order list is empty), at most `limitMs`. */
async function answersDrained(redis: Redis, prefix: string, conversationKey: string, limitMs: number): Promise<void> {
  const key = queueKeys(prefix).order(conversationKey);
  const deadline = Date.now() + limitMs;
  // Exit path of a CLI only: a short poll is simpler than subscribing to job events here.
  while ((await redis.llen(key)) > 0 && Date.now() < deadline) await sleep(100);
}
