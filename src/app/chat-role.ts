/** `npm run chat`: the terminal as a chat platform, with the same gateway, queue and worker in this process. */
import { userInfo } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { queueKeys } from "../redis/keys.js";
import type { Redis } from "ioredis";
import type { Config } from "../config/env-schema.js";
import { runTerminalAdapter } from "../bots/terminal/terminal-adapter.js";
import {
  createTerminalReplyPortFactory,
  followResize,
  type TerminalScreen,
} from "../bots/terminal/terminal-reply-port.js";
import type { ReplyPort, ReplyPortFactory } from "../contracts/reply-port.js";
import type { Logger } from "../observability/logger.js";
import type { Metrics } from "../observability/metrics.js";
import { startBotsRole } from "./bots-role.js";
import { startWorkerRole } from "./worker-role.js";

/** Runs a terminal conversation until end of input or /quit, waiting for the last answer. */
export async function runTerminalChat(
  config: Config,
  redis: Redis,
  deps: { logger: Logger; metrics: Metrics },
  screen: TerminalScreen,
): Promise<void> {
  const out = process.stdout;
  const user = userInfo().username || "you";
  const session = await sessionFor(redis, config.KEY_PREFIX, user, screen);
  const conversationKey = `term:${session}`;
  const bots = await startBotsRole(config, redis, deps, { adapters: false });
  const worker = await startWorkerRole(config, redis, deps, {
    extraPorts: { terminal: onlyConversation(conversationKey, createTerminalReplyPortFactory(screen)) },
  });
  if (out.isTTY)
    out.write(
      `Chatting with ${config.MODEL} at ${config.OPENAI_BASE_URL}. /help for commands, Ctrl-C stops an answer, Ctrl-D leaves.\n`,
    );
  const terminal = runTerminalAdapter({
    gateway: bots.gateway,
    settings: bots.settings,
    input: process.stdin,
    screen,
    session,
    userName: user,
    maxInputChars: config.MAX_INPUT_CHARS,
  });
  let leftByInterrupt = false;
  const onInterrupt = () =>
    void terminal.interrupt().then((outcome) => {
      if (outcome === "leaving") leftByInterrupt = true;
    });
  const onResize = () => followResize(screen);
  process.on("SIGINT", onInterrupt);
  out.on("resize", onResize);
  try {
    await terminal.done;
    // Let queued questions be answered before leaving (piped input ends before the answers do);
    // Ctrl-C already stopped what ran, and nobody waits for the rest.
    if (!leftByInterrupt)
      await answersDrained(
        redis,
        config.KEY_PREFIX,
        conversationKey,
        config.MODEL_TIMEOUT_MS * (config.MAX_TOOL_ROUNDS + 1),
      );
  } finally {
    process.removeListener("SIGINT", onInterrupt);
    out.removeListener("resize", onResize);
  }
  await worker.close();
  await bots.close();
}

/**
 * The user's own conversation, unless an earlier session was killed while answering in it: its job holds
 * the conversation until BullMQ counts it as stalled (about a minute), so this session starts a new one.
 */
async function sessionFor(redis: Redis, prefix: string, user: string, screen: TerminalScreen): Promise<string> {
  const unfinished = await redis.llen(queueKeys(prefix).order(`term:${user}`));
  if (unfinished === 0) return user;
  screen.out.write(
    "ℹ Your last chat ended while an answer was being written: this one starts a new conversation (the unfinished answer is dropped).\n",
  );
  return `${user}:${Date.now().toString(36)}`;
}

/** Replies of other conversations (an earlier session's job recovered by this worker) go nowhere: they would show up unannounced. */
function onlyConversation(conversationKey: string, ports: ReplyPortFactory): ReplyPortFactory {
  return (message) => (message.conversationKey === conversationKey ? ports(message) : silentPort());
}

function silentPort(): ReplyPort {
  let next = 0;
  return {
    limits: { maxLength: 100_000, minEditIntervalMs: 50 },
    format: (markdown) => ({ text: markdown }),
    send: async () => `dropped-${next++}`,
    edit: async () => undefined,
  };
}

/** Waits until the conversation has nothing queued or running (its order list is empty), at most `limitMs`. */
async function answersDrained(redis: Redis, prefix: string, conversationKey: string, limitMs: number): Promise<void> {
  const key = queueKeys(prefix).order(conversationKey);
  const deadline = Date.now() + limitMs;
  // Exit path of a CLI only: a short poll is simpler than subscribing to job events here.
  while ((await redis.llen(key)) > 0 && Date.now() < deadline) await sleep(100);
}
