/**
 * All configured MCP servers as one source of tools: each connects in the background; their tools are named
 * `<server>__<tool>` (unique against the built-in tools and each other) and listed in config order.
 */
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import type { JsonSchemaTool } from "../tool.js";
import type { McpConfig } from "./mcp-config.js";
import {
  createMcpServerConnection,
  type McpLog,
  type McpServerConnection,
  type McpServerStatus,
  type RetryPolicy,
} from "./mcp-server-connection.js";
import { createMcpTool } from "./mcp-tool.js";
import { createToolNamer, mcpToolName, uniqueToolName } from "./mcp-tool-name.js";

/** One server's tools as the model sees them, with the server's status. */
export interface McpToolGroup {
  server: string;
  status: McpServerStatus;
  tools: JsonSchemaTool[];
}

/** Settings of the source. */
export interface McpToolSourceOptions {
  config: McpConfig;
  /** A server entry without `timeoutMs` uses this (TOOL_TIMEOUT_MS), not the SDK's 60 s. */
  defaultTimeoutMs: number;
  /** Names the built-in tools hold; an MCP tool never takes one. */
  reservedNames: readonly string[];
  /** PATH handed to stdio children. */
  inheritedPath: string | undefined;
  log: McpLog;
  /** MCP_MAX_TOOLS_PER_SERVER: a server's tools past this many are left out (one log line says so). */
  maxToolsPerServer?: number;
  retry?: RetryPolicy;
}

/** The running source. */
export interface McpToolSource {
  /** Starts connecting every enabled server; returns at once (answers never wait for a slow server). */
  start(): void;
  /** Resolves when every server's first attempt ended, or after `timeoutMs` (a one-shot CLI waits; the worker never does). */
  settled(timeoutMs: number): Promise<void>;
  /** The MCP tools available now, servers in config order. */
  tools(): JsonSchemaTool[];
  /** Per enabled server: its status and tools, in config order. */
  groups(): McpToolGroup[];
  /** Calls `listener` whenever a server's tools or readiness changed. */
  onChange(listener: () => void): void;
  /** Ends every session and stops stdio children. */
  close(): Promise<void>;
}

/**
 * A longer input schema (as JSON) leaves its tool out: it would ride along in every request (a 4 MB schema
 * broke every answer). Real schemas are a few hundred characters; 8,000 is about 2,000 tokens.
 */
const MAX_TOOL_SCHEMA_CHARS = 8000;

/** Creates the source; nothing connects until `start`. */
export function createMcpToolSource(opts: McpToolSourceOptions): McpToolSource {
  const validator = new AjvJsonSchemaValidator();
  let cache: McpToolGroup[] | undefined;
  const listeners: (() => void)[] = [];
  const reportedClashes = new Set<string>();
  const reportedCaps = new Map<string, number>();
  const reportedSchemas = new Set<string>();
  const maxPerServer = opts.maxToolsPerServer ?? 64;
  const connections: McpServerConnection[] = opts.config.servers
    .filter((server) => server.enabled)
    .map((server) =>
      createMcpServerConnection({
        config: server,
        inheritedPath: opts.inheritedPath,
        clientInfo: { name: "local-llm-chatbot", version: "0.1.0" },
        log: opts.log,
        ...(opts.retry ? { retry: opts.retry } : {}),
        onToolsChanged: () => {
          cache = undefined;
          for (const listener of listeners) listener();
        },
      }),
    );
  const timeouts = new Map(opts.config.servers.map((s) => [s.name, s.timeoutMs ?? opts.defaultTimeoutMs]));
  const skipped = opts.config.servers.filter((s) => !s.enabled).map((s) => s.name);
  if (skipped.length) opts.log.info({ mcpServers: skipped }, "MCP servers disabled in the config");

  function build(): McpToolGroup[] {
    const namer = createToolNamer(opts.reservedNames);
    return connections.map((connection) => {
      const listed = connection.tools();
      // A server listing thousands of tools would cost every rebuild (each list_changed) and flood the log.
      if (listed.length > maxPerServer && reportedCaps.get(connection.name) !== listed.length) {
        reportedCaps.set(connection.name, listed.length);
        opts.log.warn(
          { mcpServer: connection.name, listed: listed.length, kept: maxPerServer },
          `MCP server lists ${listed.length} tools; only the first ${maxPerServer} are used (MCP_MAX_TOOLS_PER_SERVER)`,
        );
      }
      const fitting = listed.slice(0, maxPerServer).filter((info) => {
        const chars = JSON.stringify(info.inputSchema ?? {}).length;
        if (chars <= MAX_TOOL_SCHEMA_CHARS) return true;
        const key = `${connection.name}/${info.name}`;
        if (!reportedSchemas.has(key)) {
          reportedSchemas.add(key);
          opts.log.warn(
            { mcpServer: connection.name, tool: info.name, schemaChars: chars, maxSchemaChars: MAX_TOOL_SCHEMA_CHARS },
            "MCP tool left out: its input schema is too large to send with every request",
          );
        }
        return false;
      });
      const tools = fitting.map((info) => {
        const wanted = mcpToolName(connection.name, info.name);
        const modelName = uniqueToolName(wanted, namer);
        const key = `${connection.name}/${info.name}`;
        if (modelName !== wanted && !reportedClashes.has(key)) {
          reportedClashes.add(key);
          opts.log.warn(
            { mcpServer: connection.name, tool: info.name, wanted, given: modelName },
            "MCP tool name taken; renamed",
          );
        }
        return createMcpTool({
          connection,
          info,
          modelName,
          timeoutMs: timeouts.get(connection.name) ?? opts.defaultTimeoutMs,
          validator,
        });
      });
      return { server: connection.name, status: connection.status(), tools };
    });
  }

  function current(): McpToolGroup[] {
    cache ??= build();
    // Statuses move without the tool list changing (connecting → retrying): always read them fresh.
    return cache.map((group, i) => ({ ...group, status: connections[i]!.status() }));
  }

  return {
    start() {
      for (const connection of connections) connection.start();
    },
    async settled(timeoutMs) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const limit = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, timeoutMs);
      });
      await Promise.race([Promise.all(connections.map((c) => c.settled())), limit]);
      clearTimeout(timer);
    },
    tools: () => current().flatMap((g) => g.tools),
    groups: current,
    onChange: (listener) => void listeners.push(listener),
    async close() {
      await Promise.all(connections.map((c) => c.close()));
      cache = undefined;
    },
  };
}
