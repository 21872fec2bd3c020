/** The doctor's check groups, in report order: each runs, or is skipped with one line saying why. */
import type { Config } from "../config/env-schema.js";
import type { SetupFinding } from "../contracts/setup-finding.js";
import { checkDiscord } from "../bots/discord/discord-setup-checks.js";
import { checkTelegram } from "../bots/telegram/telegram-setup-checks.js";
import { checkMcpServers } from "./mcp-checks.js";
import { checkModelServer } from "./model-checks.js";
import { checkRedis } from "./redis-checks.js";
import { checkSpeechServer, checkTranscriber } from "./voice-checks.js";

/** One group of set-up checks. */
export interface DoctorCheckGroup {
  /** The group's name in the report ("Redis", "Telegram", …). */
  name: string;
  /** Why this group does not apply to the configuration (it is then skipped), or undefined when it runs. */
  skipReason(config: Config): string | undefined;
  run(config: Config): Promise<SetupFinding[]>;
}

/** Every group the doctor runs, in order. */
export const DOCTOR_CHECK_GROUPS: readonly DoctorCheckGroup[] = [
  { name: "Redis", skipReason: () => undefined, run: (config) => checkRedis(config.REDIS_URL) },
  { name: "Model server", skipReason: () => undefined, run: (config) => checkModelServer(config) },
  {
    name: "Telegram",
    skipReason: (config) => (config.TELEGRAM_BOT_TOKEN ? undefined : "TELEGRAM_BOT_TOKEN is not set"),
    run: (config) =>
      checkTelegram({
        token: config.TELEGRAM_BOT_TOKEN as string,
        apiRoot: config.TELEGRAM_API_ROOT,
        httpPort: config.HTTP_PORT,
        ...(config.TELEGRAM_WEBHOOK_URL ? { webhookUrl: config.TELEGRAM_WEBHOOK_URL } : {}),
      }),
  },
  {
    name: "Discord",
    skipReason: (config) => (config.DISCORD_BOT_TOKEN ? undefined : "DISCORD_BOT_TOKEN is not set"),
    run: (config) => checkDiscord({ token: config.DISCORD_BOT_TOKEN as string, apiBase: config.DISCORD_API_BASE }),
  },
  {
    name: "MCP servers",
    skipReason: (config) => (config.MCP_CONFIG ? undefined : "MCP_CONFIG is not set"),
    // PATH is what a worker hands its stdio servers (tools-for-config.ts).
    run: (config) => checkMcpServers(config.MCP_CONFIG as string, { inheritedPath: process.env.PATH }),
  },
  {
    name: "Transcriber",
    skipReason: (config) =>
      config.STT_BASE_URL ? undefined : "STT_BASE_URL is not set (voice notes get a line saying so)",
    run: (config) =>
      checkTranscriber({
        baseURL: config.STT_BASE_URL as string,
        model: config.STT_MODEL,
        ...(config.STT_API_KEY ? { apiKey: config.STT_API_KEY } : {}),
      }),
  },
  {
    name: "Speech server",
    skipReason: (config) => (config.TTS_BASE_URL ? undefined : "TTS_BASE_URL is not set (answers stay text)"),
    run: (config) => checkSpeechServer({ baseURL: config.TTS_BASE_URL as string, voice: config.TTS_VOICE }),
  },
];
