/**
 * Structured logs (pino). Secrets are redacted twice: by key path (anything
 * named token/key/authorization) and by value (the configured secrets are
 * replaced wherever they appear in a message or error text).
 */
import { pino, type Logger } from "pino";

export type { Logger } from "pino";

const REDACT_PATHS = [
  "token",
  "*.token",
  "apiKey",
  "*.apiKey",
  "authorization",
  "*.authorization",
  "headers.authorization",
  "*.headers.authorization",
  "OPENAI_API_KEY",
  "TELEGRAM_BOT_TOKEN",
  "DISCORD_BOT_TOKEN",
  "ADMIN_TOKEN",
];

/** Replaces every occurrence of the given secrets (and Telegram's /bot<token>/ URLs) in a string. */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length >= 6) out = out.split(secret).join("[redacted]");
  }
  return out.replace(/\/bot\d+:[A-Za-z0-9_-]+/g, "/bot[redacted]");
}

/** Creates the process logger; `secrets` are scrubbed from every line written. */
export function createLogger(opts: {
  level: string;
  secrets?: readonly (string | undefined)[];
  destination?: NodeJS.WritableStream;
  name?: string;
}): Logger {
  const secrets = (opts.secrets ?? []).filter((s): s is string => typeof s === "string" && s.length >= 6);
  const scrubbing: NodeJS.WritableStream = opts.destination ?? process.stderr;
  const stream = {
    write(line: string): boolean {
      return scrubbing.write(redactSecrets(line, secrets));
    },
  };
  return pino(
    {
      level: opts.level,
      name: opts.name,
      redact: { paths: REDACT_PATHS, censor: "[redacted]" },
      base: { pid: process.pid },
    },
    stream,
  );
}
