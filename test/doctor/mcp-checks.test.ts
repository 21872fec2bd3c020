/**
 * The doctor's MCP group against real servers: server-everything over stdio starts and lists its
 * tools; a command that does not exist, a file that does not parse and a filter that leaves no tool
 * are each a failure with its fix.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkMcpServers } from "../../src/doctor/mcp-checks.js";
import { everythingEntry } from "../tools/mcp/mcp-kit.js";

function file(content: unknown): string {
  const path = join(mkdtempSync(join(tmpdir(), "doctor-mcp-")), "mcp.json");
  writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content));
  return path;
}

describe("doctor: MCP servers", () => {
  it("a server that starts and lists tools passes, naming some of them; a disabled one is skipped", async () => {
    const path = file({ mcpServers: { everything: everythingEntry(), off: { ...everythingEntry(), enabled: false } } });
    const findings = await checkMcpServers(path, { inheritedPath: process.env.PATH });
    expect(findings.map((f) => [f.check, f.status])).toEqual([
      ["file", "pass"],
      ["everything", "pass"],
      ["everything user", "warn"],
      ["off", "skip"],
    ]);
    expect(findings[1]!.detail).toMatch(/connected over stdio, \d+ tools: .*echo/);
  }, 60_000);

  it("a stdio server running as the bot's own user is a warning (not a failure); one with a user is not", async () => {
    const path = file({
      mcpServers: {
        mine: everythingEntry(),
        isolated: { ...everythingEntry(), user: String(process.getuid?.() ?? 0) },
      },
    });
    const findings = await checkMcpServers(path, { inheritedPath: process.env.PATH });
    expect(findings.map((f) => [f.check, f.status])).toEqual([
      ["file", "pass"],
      ["mine", "pass"],
      ["mine user", "warn"],
      ["isolated", "pass"],
    ]);
    expect(findings[2]!.detail).toContain("runs as the bot's own user: it can read whatever the bot can");
    expect(findings[2]!.fix).toMatch(/"user"/);
    expect(findings[2]!.fix).toMatch(/HTTP server in its own container/);
  }, 60_000);

  it("a command that does not exist fails with the command to try", async () => {
    const path = file({ mcpServers: { ghost: { command: "definitely-not-an-mcp-server-xyz", args: ["--stdio"] } } });
    const [, ghost] = await checkMcpServers(path, { inheritedPath: process.env.PATH, connectTimeoutMs: 5_000 });
    expect(ghost).toMatchObject({ check: "ghost", status: "fail" });
    expect(ghost!.detail).toMatch(/^did not start: /);
    expect(ghost!.fix).toContain("`definitely-not-an-mcp-server-xyz --stdio`");
  }, 60_000);

  it("an include list that matches no tool fails with the filter to check", async () => {
    const path = file({ mcpServers: { everything: { ...everythingEntry(), tools: { include: ["no-such-tool"] } } } });
    const [, everything] = await checkMcpServers(path, { inheritedPath: process.env.PATH });
    expect(everything).toMatchObject({ status: "fail", detail: expect.stringMatching(/offers no tools/) });
    expect(everything!.fix).toMatch(/"include"/);
  }, 60_000);

  it("a file that does not parse fails naming the server and the field", async () => {
    const path = file({ mcpServers: { github: { command: "npx", args: { bad: true } } } });
    const findings = await checkMcpServers(path, { inheritedPath: process.env.PATH });
    expect(findings).toHaveLength(1);
    expect(findings[0]).toMatchObject({ check: "file", status: "fail" });
    expect(findings[0]!.detail).toContain('server "github", field "args"');
    expect(findings[0]!.fix).toMatch(/README/);
  });
});
