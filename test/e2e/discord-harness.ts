/**
 * The whole bot (bots role + worker role, real Redis) logged into the fake Discord with the real
 * discord.js client, answering with the fake model, tools reaching the fake web. Plus the few
 * readings the Discord end-to-end scenarios share: which message writes reached a channel and
 * when, what a model request carried, whether code fences are balanced.
 */
import type { APIMessage } from "discord.js";
import {
  startFakeDiscord,
  type FakeDiscord,
  type FakeDiscordOptions,
  type RecordedRequest,
} from "../fakes/discord-server.js";
import { startFakeOpenAI, type FakeOpenAI, type FakeOpenAIOptions } from "../fakes/openai-server.js";
import { startFakeWeb, type FakeWeb } from "../fakes/web-server.js";
import { qwen3Encoder } from "../fakes/llama-extras.js";
import { startStack, type Stack } from "../support/stack.js";

/** Everything one scenario runs against. */
export interface DiscordE2E {
  discord: FakeDiscord;
  model: FakeOpenAI;
  web: FakeWeb;
  stack: Stack;
  /** Stops the bot first (so nothing writes into a closed fake), then the fakes. */
  close(): Promise<void>;
}

/** Options of one scenario's set-up. */
export interface DiscordE2EOptions {
  discord?: FakeDiscordOptions;
  /** Extra environment for the bot. */
  env?: Record<string, string>;
  /** Options of the fake model server (e.g. the models it lists, `props: { vision: true }`). */
  model?: FakeOpenAIOptions;
  /** Which roles run in the harness's own stack (default both; none, to start and restart them in the test). */
  roles?: ("bots" | "worker")[];
}

/** Starts the fakes, then the bot pointed at them; resolves once discord.js is logged in and the worker listens. */
export async function startDiscordE2E(options: DiscordE2EOptions = {}): Promise<DiscordE2E> {
  // The fake model's /tokenize needs Qwen3's vocabulary, loaded once per test process (seconds on a busy machine):
  // a head start while the bot starts, so fewer jobs sit out the worker's 5 s count timeout waiting for it. A test
  // that must not wait on it loads it in `beforeAll(qwen3Encoder)`, outside its own timeout.
  void qwen3Encoder().catch(() => undefined);
  const discord = await startFakeDiscord(options.discord);
  const model = await startFakeOpenAI(options.model);
  const web = await startFakeWeb();
  let stack: Stack;
  try {
    stack = await startStack({
      env: {
        DISCORD_BOT_TOKEN: discord.token,
        DISCORD_API_BASE: discord.apiBase,
        OPENAI_BASE_URL: model.url,
        WEATHER_API_BASE: web.url,
        // Reasoning stays out of the way of assertions on the visible text.
        SHOW_REASONING: "off",
        ...options.env,
      },
      ...(options.roles ? { roles: options.roles } : {}),
    });
  } catch (error) {
    await Promise.allSettled([discord.close(), model.close(), web.close()]);
    throw error;
  }
  return {
    discord,
    model,
    web,
    stack,
    async close() {
      await stack.close();
      await Promise.allSettled([discord.close(), model.close(), web.close()]);
    },
  };
}

/** Message writes (sends and edits) the bot made in a channel, in arrival order, any status. */
export function writesTo(discord: FakeDiscord, channelId: string): RecordedRequest[] {
  return discord.requests.filter(
    (r) =>
      r.channelId === channelId &&
      (r.route === "POST /channels/:id/messages" || r.route === "PATCH /channels/:id/messages/:id"),
  );
}

/** The largest number of `times` inside any window of `windowMs` (what a fixed-window bucket must admit). */
export function mostInAnyWindow(times: readonly number[], windowMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (sorted[i]! - sorted[j]! >= windowMs) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
}

/** The `messages` of the model request at `index`, as the model received them. */
export function sentToModel(model: FakeOpenAI, index: number): { role: string; content: string | null }[] {
  const request = model.requests[index];
  if (!request) throw new Error(`the model received no request #${index} (it got ${model.requests.length})`);
  return (request.body.messages ?? []) as { role: string; content: string | null }[];
}

/** User turns of a model request, in order (what the model was told people said). */
export function userTurns(model: FakeOpenAI, index: number): string[] {
  return sentToModel(model, index)
    .filter((m) => m.role === "user")
    .map((m) => m.content ?? "");
}

/** True when every code fence opened in `text` is closed again. */
export function fencesBalanced(text: string): boolean {
  return (text.match(/^ {0,3}```/gm) ?? []).length % 2 === 0;
}

/**
 * The bot's last message in a channel once its content satisfies `done` and every bot message there
 * is final (a message still being written carries the Stop button).
 */
export async function botAnswer(
  discord: FakeDiscord,
  channelId: string,
  done: (content: string) => boolean,
  opts: { timeoutMs?: number; label?: string } = {},
): Promise<APIMessage> {
  return discord.waitFor(
    () => {
      const mine = discord.botMessages(channelId);
      const last = mine.at(-1);
      return last && done(last.content) && mine.every((m) => (m.components ?? []).length === 0) ? last : undefined;
    },
    { timeoutMs: opts.timeoutMs ?? 8000, label: opts.label ?? "the bot's answer" },
  );
}
