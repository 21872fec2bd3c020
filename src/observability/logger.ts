/**
 * Structured logs (pino). Secrets are redacted twice: by key path (token, key, authorization) and by value
 * (the configured secrets, and any run of 12+ of their characters, wherever they appear).
 */
import { createRequire } from "node:module";
import { pino, type Logger } from "pino";
import { createSecretScrubber } from "../security/secret-scrubber.js";

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

/** How lines are written: JSON (one object a line) or pretty (a time, a level and the message, for people). */
export type LogFormat = "json" | "pretty";

/** LOG_FORMAT resolved: `auto` is pretty when the logs go to a terminal, JSON otherwise. */
export function logFormatFor(setting: "auto" | LogFormat, toTerminal: boolean): LogFormat {
  if (setting !== "auto") return setting;
  return toTerminal ? "pretty" : "json";
}

/** pino-pretty as a stream in this thread, loaded only when asked for (roles in containers never load it). */
function prettyStream(destination: NodeJS.WritableStream): NodeJS.WritableStream {
  const pretty = createRequire(import.meta.url)("pino-pretty") as (options: object) => NodeJS.WritableStream;
  return pretty({
    destination,
    colorize: (destination as { isTTY?: boolean }).isTTY === true,
    translateTime: "SYS:HH:MM:ss",
    ignore: "pid,hostname",
    sync: true,
  });
}

/** Creates the process logger; `secrets` are scrubbed from every line written. */
export function createLogger(opts: {
  level: string;
  secrets?: readonly (string | undefined)[];
  destination?: NodeJS.WritableStream;
  name?: string;
  /** Default JSON; pretty lines are made from the scrubbed JSON line, so scrubbing is the same. */
  format?: LogFormat;
}): Logger {
  const secrets = (opts.secrets ?? []).filter((s): s is string => typeof s === "string" && s.length >= 6);
  // Lines are JSON, so a secret with a quote or backslash appears escaped; a long run of a secret's
  // characters (its half after "123:", a URL-encoded form) is as bad as the whole.
  const escaped = secrets.map((s) => JSON.stringify(s).slice(1, -1)).filter((s, i) => s !== secrets[i]);
  const fragments = createSecretScrubber([...secrets, ...escaped]);
  const target: NodeJS.WritableStream = opts.destination ?? process.stderr;
  const scrubbing = opts.format === "pretty" ? prettyStream(target) : target;
  const stream = {
    write(line: string): boolean {
      return scrubbing.write(fragments.scrub(redactSecrets(line, [...escaped, ...secrets])));
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
