/** The secrets a deployment holds: none may ever reach a chat or a log line. */
import type { Config } from "../config/env-schema.js";

/** Every secret in the configuration: none of them may ever be shown in a chat. */
export function configuredSecrets(config: Config): string[] {
  let redisPassword: string | undefined;
  try {
    redisPassword = decodeURIComponent(new URL(config.REDIS_URL).password) || undefined;
  } catch {
    redisPassword = undefined; // the schema already checked the URL; nothing to add
  }
  return [
    config.TELEGRAM_BOT_TOKEN,
    config.DISCORD_BOT_TOKEN,
    config.OPENAI_API_KEY,
    config.ADMIN_TOKEN,
    redisPassword,
    ...config.WEB_USERS.map((user) => user.password),
  ].filter((s): s is string => s !== undefined);
}
