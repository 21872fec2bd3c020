/**
 * The doctor's check groups, in report order. A group either runs (returns its
 * findings) or is skipped with one line saying why (not configured).
 *
 * More groups plug in here: an MCP servers group (MCP_CONFIG: each server
 * starts and lists its tools) is added to DOCTOR_CHECK_GROUPS as one more
 * entry, with its own file beside redis-checks.ts and model-checks.ts.
 */
import type { Config } from "../config/env-schema.js";
import type { SetupFinding } from "../contracts/setup-finding.js";
import { checkDiscord } from "../adapters/discord/discord-setup-checks.js";
import { checkTelegram } from "../adapters/telegram/telegram-setup-checks.js";
import { checkModelServer } from "./model-checks.js";
import { checkRedis } from "./redis-checks.js";

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
  // MCP servers: plug in here (see the note at the top of this file).
];
