/** The secrets a deployment holds: none may ever reach a chat or a log line. */
import type { Config } from "../config/env-schema.js";

/** Query parameters whose value is a credential (`?password=`, `?key=`, `?api_key=`, `?token=`…). */
const SECRET_QUERY_KEY = /pass|key|token|secret|auth|sig|cred/i;

/** Every secret in the configuration: none of them may ever be shown in a chat. */
export function configuredSecrets(config: Config): string[] {
  const urls = [
    config.REDIS_URL,
    config.OPENAI_BASE_URL,
    config.TELEGRAM_API_ROOT,
    config.DISCORD_API_BASE,
    config.WEATHER_API_BASE,
    config.NEWS_RSS_URL,
  ];
  return [
    config.TELEGRAM_BOT_TOKEN,
    config.DISCORD_BOT_TOKEN,
    config.OPENAI_API_KEY,
    config.ADMIN_TOKEN,
    ...urls.flatMap(urlSecrets),
    ...config.WEB_USERS.map((user) => user.password),
  ].filter((s): s is string => s !== undefined && s !== "");
}

/** A URL's password and its credential-named query values, as written and decoded. */
export function urlSecrets(value: string): string[] {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return []; // the schema already checked the URL; nothing to add
  }
  const found: string[] = [];
  if (url.password) found.push(url.password, safeDecode(url.password));
  for (const [key, raw] of url.searchParams) {
    if (SECRET_QUERY_KEY.test(key) && raw) found.push(raw);
  }
  return [...new Set(found)];
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
