/** Shared wiring for the MCP tests: the real server-everything over stdio, a recording log, waiting helpers. */
import { vi } from "vitest";
import { fileURLToPath } from "node:url";
import { parseMcpConfig, type McpConfig } from "../../../src/tools/mcp/mcp-config.js";
import type { McpLog } from "../../../src/tools/mcp/mcp-server-connection.js";
import {
  createMcpToolSource,
  type McpToolSource,
  type McpToolSourceOptions,
} from "../../../src/tools/mcp/mcp-tool-source.js";

/** The entry point of @modelcontextprotocol/server-everything; its first argument picks the transport. */
export const everythingScript = fileURLToPath(
  new URL("../../../node_modules/@modelcontextprotocol/server-everything/dist/index.js", import.meta.url),
);

/** A `mcpServers` entry that starts server-everything over stdio with this Node. */
export function everythingEntry(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { command: process.execPath, args: [everythingScript, "stdio"], ...extra };
}

/** A config of the given entries, validated as the file would be. */
export function mcpConfig(servers: Record<string, unknown>): McpConfig {
  return parseMcpConfig({ mcpServers: servers });
}

/** A log that keeps every line for assertions. */
export interface RecordingLog extends McpLog {
  lines: { level: "info" | "warn"; fields: Record<string, unknown>; message: string }[];
}

/** Creates a RecordingLog. */
export function recordingLog(): RecordingLog {
  const lines: RecordingLog["lines"] = [];
  return {
    lines,
    info: (fields, message) => void lines.push({ level: "info", fields: fields as Record<string, unknown>, message }),
    warn: (fields, message) => void lines.push({ level: "warn", fields: fields as Record<string, unknown>, message }),
  };
}

/** A started source with test-friendly retry timing; remember to close it. */
export function startSource(
  config: McpConfig,
  overrides: Partial<McpToolSourceOptions> = {},
): { source: McpToolSource; log: RecordingLog } {
  const log = recordingLog();
  const source = createMcpToolSource({
    config,
    defaultTimeoutMs: 5_000,
    reservedNames: ["get_weather", "get_news", "get_time", "read_url"],
    inheritedPath: process.env.PATH,
    log,
    retry: { initialMs: 200, maxMs: 1_000 },
    ...overrides,
  });
  source.start();
  return { source, log };
}

/** Polls (vitest's `vi.waitFor`) until `predicate` holds (at most `timeoutMs`). */
export function waitFor(predicate: () => boolean, timeoutMs = 10_000, what = "condition"): Promise<void> {
  return vi.waitFor(
    () => {
      if (!predicate()) throw new Error(`timed out waiting for ${what}`);
    },
    { timeout: timeoutMs, interval: 20 },
  );
}

/** Waits until `server` is connected with its tools listed. */
export function waitReady(source: McpToolSource, server: string, timeoutMs = 15_000): Promise<void> {
  return waitFor(
    () => source.groups().find((g) => g.server === server)?.status.state === "ready",
    timeoutMs,
    `${server} to be ready`,
  );
}
