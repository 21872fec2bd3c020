/**
 * What an MCP stdio server can reach of the bot (issue 36, item 2), asked of a real stdio server
 * (fixtures/probe-stdio-server.mjs) that reports its working directory and user and tries to read
 * `./.env` and its parent's `/proc/<pid>/environ`. The bot's directory here holds a `.env` with a
 * token, as a real deployment's does.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseMcpConfig } from "../../../src/tools/mcp/mcp-config.js";
import type { McpToolSource } from "../../../src/tools/mcp/mcp-tool-source.js";
import { mcpConfig, startSource, waitReady } from "./mcp-kit.js";

const probeServer = fileURLToPath(new URL("./fixtures/probe-stdio-server.mjs", import.meta.url));
const SECRET = "7000000001:AAbotTokenInTheDotEnvFile";

interface ProbeReport {
  cwd: string;
  uid: number;
  dotenv: string;
  parentEnviron: string;
}

let botDir: string;
let home: string;
let source: McpToolSource | undefined;
beforeEach(() => {
  home = process.cwd();
  botDir = mkdtempSync(join(tmpdir(), "bot-dir-"));
  writeFileSync(join(botDir, ".env"), `TELEGRAM_BOT_TOKEN=${SECRET}\n`);
  process.chdir(botDir);
});
afterEach(async () => {
  await source?.close();
  source = undefined;
  process.chdir(home);
  rmSync(botDir, { recursive: true, force: true });
});

async function probe(entry: Record<string, unknown>): Promise<ProbeReport> {
  ({ source } = startSource(mcpConfig({ probe: { command: process.execPath, args: [probeServer], ...entry } })));
  await waitReady(source, "probe");
  const tool = source.tools().find((t) => t.name === "probe__probe");
  if (!tool) throw new Error("the probe tool is not listed");
  return JSON.parse(String(await tool.execute({}, { signal: new AbortController().signal }))) as ProbeReport;
}

describe("MCP stdio children", () => {
  it("start in an empty directory of their own, not the bot's: ./.env is not there to read", async () => {
    const report = await probe({});
    expect(report.cwd).not.toBe(botDir);
    expect(report.cwd.startsWith(tmpdir())).toBe(true);
    expect(report.dotenv).toBe("refused: ENOENT");
    expect(readdirSync(report.cwd)).toEqual([]);
    // The directory goes with the server.
    await source?.close();
    source = undefined;
    expect(existsSync(report.cwd)).toBe(false);
  });

  it("an entry's cwd is honoured", async () => {
    const report = await probe({ cwd: tmpdir() });
    expect(report.cwd).toBe(tmpdir());
  });

  it.runIf(process.getuid?.() === 0)(
    "with user, the child runs as that account and cannot read the bot's /proc environ",
    async () => {
      const report = await probe({ user: "nobody" });
      expect(report.uid).toBe(65534);
      expect(report.parentEnviron).toBe("refused: EACCES");
      expect(report.dotenv).toBe("refused: ENOENT");
      // Running as the bot's own user, it could: what docs/security.md warns about.
      await source?.close();
      const same = await probe({});
      expect(same.parentEnviron.startsWith("read: ")).toBe(true);
    },
  );

  it("a user that does not exist is one clear failure of that server", async () => {
    ({ source } = startSource(
      mcpConfig({ probe: { command: process.execPath, args: [probeServer], user: "no-such-user-here" } }),
    ));
    await source.settled(5_000);
    expect(source.groups()[0]?.status.error).toContain('user "no-such-user-here" does not exist on this system');
  });

  it("user must look like an account", () => {
    expect(() => parseMcpConfig({ mcpServers: { p: { command: "x", user: "root; rm -rf /" } } })).toThrow(
      /expected a user name, a uid or uid:gid/,
    );
  });
});
