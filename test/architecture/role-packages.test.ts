/**
 * Each role loads only the libraries it uses, because each one costs megabytes of resident memory
 * in every process: the bots role (receive, validate, enqueue) carries its platforms' libraries and
 * nothing of the model, the tools or the attachments; the worker carries no discord.js (its Discord
 * replies go through @discordjs/rest alone); and neither loads what only a first use needs (linkedom
 * on read_url or get_news, unpdf on a PDF, sharp on a picture, the MCP SDK without MCP_CONFIG,
 * Express and bull-board without ADMIN_TOKEN). Real `src/main.ts` processes against the fakes, with
 * a preload recording every npm package their main thread resolves (worker threads, such as the
 * Qwen3 tokenizer's and the HTML extractor's, load theirs out of its sight).
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect } from "vitest";
import { e2eTest } from "../support/fixtures.js";

const RECORDER = new URL("../support/package-recorder.mjs", import.meta.url).href;

/** Loaded on first use only, in whichever role uses them. */
const FIRST_USE_ONLY = [
  "linkedom",
  "@mozilla/readability",
  "unpdf",
  "sharp",
  "@modelcontextprotocol/sdk",
  "@bull-board/api",
  "@bull-board/express",
  "express",
];

type SpawnRole = (role: "bots" | "worker", env: Record<string, string>) => Promise<unknown>;

/**
 * What a role process started against this test's Redis and model has resolved, once `expected` are
 * among them (start-up work may finish just after it said "started").
 */
async function packagesOf(
  spawnRole: SpawnRole,
  role: "bots" | "worker",
  deps: { redis: { url: string; prefix: string }; model: { url: string } },
  platforms: Record<string, string>,
  expected: string[],
): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), "role-packages-"));
  try {
    const log = join(dir, "packages.log");
    const env = {
      REDIS_URL: deps.redis.url,
      KEY_PREFIX: deps.redis.prefix,
      OPENAI_BASE_URL: deps.model.url,
      ...platforms,
    };
    await spawnRole(role, { ...env, NODE_OPTIONS: `--import=${RECORDER}`, PACKAGES_LOG: log });
    const read = (): string[] => readFileSync(log, "utf8").split("\n").filter(Boolean).sort();
    await expect.poll(read, { timeout: 10_000 }).toEqual(expect.arrayContaining(expected));
    return read();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

type FakePlatform = { token: string };
/** The environment that configures both platforms against their fakes. */
function bothPlatforms(
  tg: FakePlatform & { apiRoot: string },
  discord: FakePlatform & { apiBase: string },
): Record<string, string> {
  return {
    TELEGRAM_BOT_TOKEN: tg.token,
    TELEGRAM_API_ROOT: tg.apiRoot,
    DISCORD_BOT_TOKEN: discord.token,
    DISCORD_API_BASE: discord.apiBase,
  };
}

describe("the libraries each role loads", () => {
  e2eTest(
    "bots: the platforms' libraries and the queue; no model client, tools, attachments or dashboard",
    async ({ fakeTelegram, fakeDiscord, model, testRedis, spawnRole }) => {
      const [tg, discord] = await Promise.all([fakeTelegram(), fakeDiscord()]);
      const packages = await packagesOf(
        spawnRole,
        "bots",
        { redis: testRedis("role-packages-bots"), model },
        bothPlatforms(tg, discord),
        ["grammy", "discord.js", "bullmq", "ioredis"],
      );
      for (const name of ["openai", ...FIRST_USE_ONLY]) expect(packages, name).not.toContain(name);
    },
  );

  e2eTest("bots on Telegram alone: no discord.js", async ({ fakeTelegram, model, testRedis, spawnRole }) => {
    const tg = await fakeTelegram();
    const packages = await packagesOf(
      spawnRole,
      "bots",
      { redis: testRedis("role-packages-tg"), model },
      { TELEGRAM_BOT_TOKEN: tg.token, TELEGRAM_API_ROOT: tg.apiRoot },
      ["grammy", "bullmq"],
    );
    expect(packages).not.toContain("discord.js");
  });

  e2eTest(
    "worker: the model client, grammY's and @discordjs/rest's REST clients; no discord.js and nothing only a first use needs",
    async ({ fakeTelegram, fakeDiscord, model, testRedis, spawnRole }) => {
      const [tg, discord] = await Promise.all([fakeTelegram(), fakeDiscord()]);
      const packages = await packagesOf(
        spawnRole,
        "worker",
        { redis: testRedis("role-packages-worker"), model },
        bothPlatforms(tg, discord),
        ["openai", "grammy", "@discordjs/rest", "bullmq", "ioredis"],
      );
      for (const name of ["discord.js", ...FIRST_USE_ONLY]) expect(packages, name).not.toContain(name);
    },
  );
});
