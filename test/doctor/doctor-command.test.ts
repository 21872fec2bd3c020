/**
 * `node dist/main.js doctor` as a person (or a health gate) runs it: a real process
 * against real Redis and the fakes, settings from an env file, one line per check,
 * `--json` for automation, exit code 0 only when nothing failed; and `--help`.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeOpenAI, type FakeOpenAI } from "../fakes/openai-server.js";
import { qwen3LikeModel } from "../fakes/openai-model-behaviour.js";
import { startFakeTelegram, type FakeTelegram } from "../fakes/telegram-server.js";
import { startFakeDiscord, type FakeDiscord } from "../fakes/discord-server.js";
import { everythingEntry } from "../tools/mcp/mcp-kit.js";
import { startPrivateRedis, type PrivateRedis } from "../support/private-redis.js";
import { runCli } from "../support/run-cli.js";

const run = (args: string[], env: Record<string, string>) => runCli("src/main.ts", args, { env });

let redis: PrivateRedis;
let model: FakeOpenAI;
let noJinja: FakeOpenAI;
let tg: FakeTelegram;
let discord: FakeDiscord;
let dir: string;

beforeAll(async () => {
  redis = await startPrivateRedis({ args: ["--maxmemory-policy", "noeviction"] });
  model = await startFakeOpenAI({ contextTokens: 16384, handler: qwen3LikeModel() });
  noJinja = await startFakeOpenAI({ contextTokens: 16384, toolCalls: "requires-jinja", handler: qwen3LikeModel() });
  tg = await startFakeTelegram();
  discord = await startFakeDiscord();
  dir = mkdtempSync(join(tmpdir(), "doctor-cli-"));
});
afterAll(async () => {
  await Promise.all([redis.close(), model.close(), noJinja.close(), tg.close(), discord.close()]);
  rmSync(dir, { recursive: true, force: true });
});

// Each case starts real processes through tsx: seconds apiece on two shared cores.
describe("doctor command", { timeout: 60_000 }, () => {
  it("--json: every group passes against a well set-up stack, exit code 0; the settings came from ENV_FILE", async () => {
    const file = join(dir, "good.env");
    const mcpFile = join(dir, "mcp.json");
    writeFileSync(mcpFile, JSON.stringify({ mcpServers: { everything: everythingEntry() } }));
    writeFileSync(
      file,
      [
        `REDIS_URL=${redis.url}`,
        `OPENAI_BASE_URL=${model.url}`,
        `TELEGRAM_BOT_TOKEN=${tg.token}`,
        `TELEGRAM_API_ROOT=${tg.apiRoot}`,
        `DISCORD_BOT_TOKEN=${discord.token}`,
        `DISCORD_API_BASE=${discord.apiBase}`,
        `MCP_CONFIG=${mcpFile}`,
      ].join("\n"),
    );
    const { code, stdout, stderr } = await run(["doctor", "--json"], { ENV_FILE: file });
    expect(stderr).toBe("");
    const report = JSON.parse(stdout) as { ok: boolean; findings: { group: string; check: string; status: string }[] };
    // The one warning: a stdio MCP server runs as the bot's own user (it does not fail the run); voice is not set up here.
    expect(report.findings.filter((f) => f.status !== "pass")).toEqual([
      expect.objectContaining({ group: "MCP servers", check: "everything user", status: "warn" }),
      expect.objectContaining({ group: "Transcriber", check: "configured", status: "skip" }),
      expect.objectContaining({ group: "Speech server", check: "configured", status: "skip" }),
    ]);
    expect(report.ok).toBe(true);
    expect([...new Set(report.findings.map((f) => f.group))]).toEqual([
      "Redis",
      "Model server",
      "Telegram",
      "Discord",
      "MCP servers",
      "Transcriber",
      "Speech server",
    ]);
    expect(code).toBe(0);
    expect(stdout).not.toContain(tg.token);
    expect(stdout).not.toContain(discord.token);
  });

  it("one line per check with ✓ / ✗ and the fix; a server without --jinja fails the run (exit 1)", async () => {
    const { code, stdout } = await run(["doctor"], { REDIS_URL: redis.url, OPENAI_BASE_URL: noJinja.url });
    expect(code).toBe(1);
    const lines = stdout.trim().split("\n");
    expect(lines).toContain(
      "✗ Model server · tool calls: the server refuses requests with tools (HTTP 500: tools param requires --jinja flag) → fix: start llama-server with --jinja (its chat template parses tool calls), e.g. llama-server -hf Qwen/Qwen3-1.7B-GGUF:Q8_0 --jinja",
    );
    expect(lines).toContain(`✓ Model server · answers: answers at ${noJinja.url}`);
    expect(lines).toContain("– Telegram · configured: TELEGRAM_BOT_TOKEN is not set: skipped");
    expect(lines.at(-1)).toBe("1 check failed.");
    for (const line of lines.slice(0, -1)) expect(line).toMatch(/^[✓✗–] /);
  });

  it("a bad setting stops it with the variable named (exit 1, like every role)", async () => {
    const { code, stderr } = await run(["doctor"], { MODEL_MAX_TOKENS: "lots" });
    expect(code).toBe(1);
    expect(stderr).toMatch(/MODEL_MAX_TOKENS: expected a whole number/);
  });

  it("--help lists the roles and the commands", async () => {
    const { code, stdout } = await run(["--help"], {});
    expect(code).toBe(0);
    for (const name of ["all", "bots", "worker", "chat", "doctor"])
      expect(stdout).toMatch(new RegExp(`^  ${name} +\\S`, "m"));
    expect(stdout).toContain("--json");
    expect(stdout).toContain("ENV_FILE");
  });
});
