/** Reads and validates the environment once, at start. */
import { envSchema, type Config } from "./env-schema.js";
import { EnvFileError, loadEnvFile } from "./env-file.js";

/** A bad or missing setting: the message names each variable and what it expects. */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
  constructor(readonly problems: { variable: string; expected: string }[]) {
    // One line: a start-up failure is read in a terminal or a container log, where a dump would be noise.
    super(`Invalid configuration: ${problems.map((p) => `${p.variable}: ${p.expected}`).join("; ")}`);
  }
}

/** Parses an environment (process.env by default); throws ConfigError naming every bad variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  // Empty strings count as unset so `FOO=` in an .env file means "use the default".
  const cleaned: Record<string, string> = {};
  for (const key of Object.keys(envSchema.shape)) {
    const value = env[key];
    if (value !== undefined && value.trim() !== "") cleaned[key] = value.trim();
  }
  const parsed = envSchema.safeParse(cleaned);
  if (parsed.success) return parsed.data;
  throw new ConfigError(
    parsed.error.issues.map((issue) => {
      const variable = String(issue.path[0] ?? "environment");
      const got = cleaned[variable];
      const shown = got === undefined || isSecret(variable) ? "" : ` (got "${maskedValue(got)}")`;
      return { variable, expected: issue.message + shown };
    }),
  );
}

/** Reads `.env` (or ENV_FILE) and the environment; a bad setting or file is said on stderr and exits 1. */
export function loadConfigOrExit(): Config {
  try {
    loadEnvFile();
    return loadConfig();
  } catch (error) {
    if (!(error instanceof ConfigError || error instanceof EnvFileError)) throw error;
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
}

/** Variables whose value is a secret, never shown in an error (MODEL_MAX_TOKENS is a number, not a token). */
function isSecret(variable: string): boolean {
  return /(TOKEN|KEY|SECRET|PASSWORD)$/.test(variable) || variable === "WEB_USERS";
}

/**
 * A value as it may be shown in an error: userinfo (`user:password@`) and query values replaced by `***`,
 * found by pattern so that a value too malformed for `new URL` is masked too; control characters escaped.
 */
export function maskedValue(value: string): string {
  return JSON.stringify(value.replace(/[^\s/?#@]*@/g, "***@").replace(/([?&;][^=&#\s]*=)[^&#\s]*/g, "$1***")).slice(
    1,
    -1,
  );
}
