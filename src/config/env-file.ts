/**
 * Reads an `.env` file into the environment at start, with Node's own parser
 * (`process.loadEnvFile`, no dependency). Variables already set win (Node keeps
 * them), so a process manager or `docker compose` can still override the file.
 */
import { existsSync } from "node:fs";
import { resolve } from "node:path";

/** What was read: the file's path, or the path looked at when there was none. */
export type EnvFileOutcome = { loaded: string } | { missing: string };

/** A named env file (ENV_FILE) that is missing or unreadable: the message names it. */
export class EnvFileError extends Error {
  override readonly name = "EnvFileError";
}

/** Loads `ENV_FILE` (which must exist) or `./.env` (optional) into process.env, keeping variables already set. */
export function loadEnvFile(cwd = process.cwd()): EnvFileOutcome {
  const named = process.env.ENV_FILE?.trim();
  const path = resolve(cwd, named || ".env");
  if (!existsSync(path)) {
    if (named) throw new EnvFileError(`ENV_FILE: no such file ${path}`);
    return { missing: path };
  }
  try {
    process.loadEnvFile(path);
  } catch (error) {
    throw new EnvFileError(`${named ? "ENV_FILE" : ".env"}: cannot read ${path} (${(error as Error).message})`);
  }
  return { loaded: path };
}
