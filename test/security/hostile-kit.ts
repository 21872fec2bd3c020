/**
 * Shared set-up of the hostile-input end-to-end tests: the whole bot in-process (bots +
 * worker roles, real Redis) against the fake Telegram or Discord, the fake model and the
 * fake web, plus the readings those tests share (what the model was asked, every text
 * the bot put into a chat).
 */
import { startFakeTelegram, type FakeTelegram, type FakeTelegramOptions } from "../fakes/telegram-server.js";
import { startFakeDiscord, type FakeDiscord } from "../fakes/discord-server.js";
import { startFakeOpenAI, textAnswer, type FakeOpenAI, type RecordedRequest } from "../fakes/openai-server.js";
import { startFakeWeb, type FakeWeb } from "../fakes/web-server.js";
import { startStack, type Stack, type StackOptions } from "../support/stack.js";

/** A running deployment against fakes; `close` stops the bot first, then the fakes. */
export interface HostileRig {
  model: FakeOpenAI;
  web: FakeWeb;
  stack: Stack;
  tg?: FakeTelegram;
  discord?: FakeDiscord;
  close(): Promise<void>;
}

/** Options of a rig: which platform, extra environment, worker knobs. */
export interface HostileRigOptions {
  platform: "telegram" | "discord";
  env?: Record<string, string>;
  /** Environment that depends on where the fakes listen (e.g. READ_URL_ALLOW_HOSTS naming the fake web). */
  envFor?: (fakes: { web: FakeWeb }) => Record<string, string>;
  worker?: StackOptions["worker"];
  telegram?: FakeTelegramOptions;
  logLevel?: string;
}

/** The last user turn of a model request (what the model was asked this time). */
export function lastUserTurn(request: RecordedRequest): string {
  const users = (request.body.messages ?? []).filter((m) => m.role === "user");
  const last = users[users.length - 1];
  return typeof last?.content === "string" ? last.content : "";
}

/** A model that answers every request with "answer to: <last user turn>", so each answer names its question. */
export function echoingModel(model: FakeOpenAI): void {
  model.setHandler((request) => textAnswer(`answer to: ${lastUserTurn(request)}`));
}

/** Starts the fakes, then the bot pointed at them. */
export async function startHostileRig(opts: HostileRigOptions): Promise<HostileRig> {
  const model = await startFakeOpenAI();
  const web = await startFakeWeb();
  const tg = opts.platform === "telegram" ? await startFakeTelegram(opts.telegram) : undefined;
  const discord = opts.platform === "discord" ? await startFakeDiscord() : undefined;
  const platformEnv: Record<string, string> = tg
    ? { TELEGRAM_BOT_TOKEN: tg.token, TELEGRAM_API_ROOT: tg.apiRoot }
    : { DISCORD_BOT_TOKEN: discord!.token, DISCORD_API_BASE: discord!.apiBase };
  const closeFakes = () => Promise.allSettled([model.close(), web.close(), tg?.close(), discord?.close()]);
  let stack: Stack;
  try {
    stack = await startStack({
      env: {
        ...platformEnv,
        OPENAI_BASE_URL: model.url,
        WEATHER_API_BASE: web.url,
        SHOW_REASONING: "off",
        ...opts.env,
        ...opts.envFor?.({ web }),
      },
      ...(opts.worker ? { worker: opts.worker } : {}),
      ...(opts.logLevel ? { logLevel: opts.logLevel } : {}),
    });
  } catch (error) {
    await closeFakes();
    throw error;
  }
  return {
    model,
    web,
    stack,
    ...(tg ? { tg } : {}),
    ...(discord ? { discord } : {}),
    async close() {
      await stack.close();
      await closeFakes();
    },
  };
}

/** Every text the bot sent to Telegram (messages, edits, drafts), whatever the outcome. */
export function telegramTextsSent(tg: FakeTelegram): string[] {
  return tg
    .requests()
    .filter((r) => ["sendmessage", "editmessagetext", "sendmessagedraft"].includes(r.method.toLowerCase()))
    .map((r) => String(r.params.text ?? ""));
}

/** Every message body the bot sent to Discord (creates and edits), as JSON text. */
export function discordBodiesSent(discord: FakeDiscord): string[] {
  return discord.requests
    .filter((r) => r.method === "POST" || r.method === "PATCH")
    .map((r) => JSON.stringify(r.body ?? {}));
}
