import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EnvFileError, loadEnvFile } from "../../src/config/env-file.js";
import { loadConfig } from "../../src/config/load-config.js";

const KEYS = ["ENV_FILE", "MODEL", "KEY_PREFIX", "TELEGRAM_BOT_TOKEN"];
let dir: string;
let saved: Record<string, string | undefined>;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "env-file-"));
  saved = Object.fromEntries(KEYS.map((k) => [k, process.env[k]]));
  for (const k of KEYS) delete process.env[k];
});
afterEach(() => {
  for (const k of KEYS) {
    if (saved[k] === undefined) delete process.env[k];
    else process.env[k] = saved[k];
  }
  rmSync(dir, { recursive: true, force: true });
});

describe("loadEnvFile", () => {
  it("reads ./.env into the settings, and a variable already set wins", () => {
    writeFileSync(join(dir, ".env"), "# a comment\nMODEL=qwen3-from-file\nKEY_PREFIX=fromfile\nTELEGRAM_BOT_TOKEN=\n");
    process.env.KEY_PREFIX = "fromenv";
    expect(loadEnvFile(dir)).toEqual({ loaded: join(dir, ".env") });
    const config = loadConfig();
    expect(config.MODEL).toBe("qwen3-from-file");
    expect(config.KEY_PREFIX).toBe("fromenv");
    // `TELEGRAM_BOT_TOKEN=` as copied from .env.example means "not set".
    expect(config.TELEGRAM_BOT_TOKEN).toBeUndefined();
  });

  it("is optional: without a .env nothing changes", () => {
    expect(loadEnvFile(dir)).toEqual({ missing: join(dir, ".env") });
    expect(loadConfig().MODEL).toBe("qwen3-1.7b");
  });

  it("ENV_FILE names another file, relative to the working directory", () => {
    writeFileSync(join(dir, "staging.env"), "MODEL=staging-model\n");
    writeFileSync(join(dir, ".env"), "MODEL=default-file\n");
    process.env.ENV_FILE = "staging.env";
    expect(loadEnvFile(dir)).toEqual({ loaded: join(dir, "staging.env") });
    expect(loadConfig().MODEL).toBe("staging-model");
  });

  it("`cp .env.example .env` gives a valid configuration with the documented defaults", () => {
    writeFileSync(join(dir, ".env"), readFileSync(new URL("../../.env.example", import.meta.url), "utf8"));
    loadEnvFile(dir);
    const config = loadConfig();
    expect(config.MODEL).toBe("qwen3-1.7b");
    expect(config.TELEGRAM_BOT_TOKEN).toBeUndefined();
    expect(config.NEWS_RSS_URL).toContain("{query}");
  });

  it("a named ENV_FILE that does not exist is a clear error", () => {
    process.env.ENV_FILE = "nope.env";
    expect(() => loadEnvFile(dir)).toThrow(EnvFileError);
    expect(() => loadEnvFile(dir)).toThrow(`ENV_FILE: no such file ${join(dir, "nope.env")}`);
  });
});
