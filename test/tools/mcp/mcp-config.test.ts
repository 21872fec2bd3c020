/** The MCP servers file: the desktop-client format is accepted as is, and a bad file names the server and the field. */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../../support/run-cli.js";
import {
  loadMcpConfigFile,
  mcpConfigSecrets,
  McpConfigError,
  parseMcpConfig,
} from "../../../src/tools/mcp/mcp-config.js";

function writeConfig(content: string): string {
  const path = join(mkdtempSync(join(tmpdir(), "mcp-config-")), "mcp.json");
  writeFileSync(path, content);
  return path;
}

function problemOf(json: unknown): string {
  try {
    parseMcpConfig(json, "mcp.json");
  } catch (error) {
    expect(error).toBeInstanceOf(McpConfigError);
    return (error as Error).message;
  }
  throw new Error("expected the config to be refused");
}

describe("MCP_CONFIG file", () => {
  it("reads the format desktop clients use, stdio and remote, in file order", () => {
    const config = loadMcpConfigFile(
      writeConfig(
        JSON.stringify({
          mcpServers: {
            filesystem: {
              command: "npx",
              args: ["-y", "@modelcontextprotocol/server-filesystem", "/data"],
              env: { DEBUG: "1" },
            },
            search: {
              url: "https://mcp.example.com/mcp",
              headers: { Authorization: "Bearer abcdefghijkl" },
              timeoutMs: 20000,
            },
            old: { type: "sse", url: "http://127.0.0.1:9000/sse", disabled: true, autoApprove: [] },
            picky: {
              command: "node",
              args: ["server.js"],
              cwd: "/srv",
              tools: { include: ["b", "a"], exclude: ["c"] },
              enabled: true,
            },
          },
        }),
      ),
    );
    expect(config.servers.map((s) => s.name)).toEqual(["filesystem", "search", "old", "picky"]);
    expect(config.servers[0]).toMatchObject({
      enabled: true,
      exclude: [],
      transport: { kind: "stdio", command: "npx", env: { DEBUG: "1" } },
    });
    expect(config.servers[1]).toMatchObject({ timeoutMs: 20000, transport: { kind: "http", sseOnly: false } });
    expect(config.servers[2]).toMatchObject({ enabled: false, transport: { kind: "http", sseOnly: true } });
    expect(config.servers[3]).toMatchObject({ include: ["b", "a"], exclude: ["c"], transport: { cwd: "/srv" } });
    // Auth headers and token-named env values are kept out of logs and chats; "1" is a setting, not a secret.
    expect(mcpConfigSecrets(config)).toEqual(["Bearer abcdefghijkl"]);
  });

  it("names the server and the field of a bad entry", () => {
    expect(problemOf({ mcpServers: { github: { command: "npx", args: "-y server-github" } } })).toContain(
      'server "github", field "args": expected an array of strings',
    );
    expect(problemOf({ mcpServers: { web: { url: "ftp://example.com" } } })).toContain(
      'server "web", field "url": expected an http or https URL',
    );
    expect(problemOf({ mcpServers: { slow: { command: "x", timeoutMs: "soon" } } })).toContain(
      'server "slow", field "timeoutMs": expected a number of milliseconds',
    );
    expect(problemOf({ mcpServers: { f: { command: "x", tools: { include: "echo" } } } })).toContain(
      'server "f", field "tools.include": expected an array of tool names',
    );
    expect(problemOf({ mcpServers: { typo: { command: "x", evn: {} } } })).toContain(
      'server "typo": unknown field "evn"',
    );
    expect(problemOf({ mcpServers: { both: { command: "x", url: "http://a" } } })).toContain(
      'server "both": expected either "command"',
    );
    expect(problemOf({ mcpServers: { none: { args: [] } } })).toContain(
      'server "none": expected either "command" (a stdio server) or "url"',
    );
    expect(problemOf({ servers: {} })).toContain('field "mcpServers"');
  });

  it("says when the file is missing or not JSON", () => {
    expect(() => loadMcpConfigFile("/nonexistent/mcp.json")).toThrow(
      /MCP_CONFIG: cannot read \/nonexistent\/mcp\.json: ENOENT/,
    );
    expect(() => loadMcpConfigFile(writeConfig("{ mcpServers: "))).toThrow(/is not valid JSON/);
    // Where an editor shows it: line and column, not a character position.
    expect(() => loadMcpConfigFile(writeConfig('{\n  "mcpServers": {\n    "a": { "command": "x", },\n  }\n}'))).toThrow(
      /is not valid JSON: line 3, column 28: Expected double-quoted property name$/,
    );
    expect(() => loadMcpConfigFile(writeConfig('{\n  "mcpServers": {'))).toThrow(
      /is not valid JSON: line 2, column 18: Expected property name or '}'$/,
    );
  });

  it("a worker started with a bad file stops at once with the server and the field, before connecting anywhere", async () => {
    const path = writeConfig(JSON.stringify({ mcpServers: { github: { command: "npx", args: { bad: true } } } }));
    // An unreachable Redis: the config check must come first, so this never gets that far.
    const { code, stderr } = await runCli("src/main.ts", ["worker"], {
      env: { MCP_CONFIG: path, REDIS_URL: "redis://127.0.0.1:1" },
    });
    expect(code).toBe(1); // like every bad setting
    expect(stderr).toContain('server "github", field "args": expected an array of strings');
    expect(stderr).not.toContain("Redis");
  });
});
