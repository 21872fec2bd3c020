/** The built-in tools plus those of MCP_CONFIG's servers, behind one catalogue: every role that answers builds them here. */
import type { Config } from "../config/env-schema.js";
import type { HealthCheck } from "../observability/http-server.js";
import { createTools } from "../tools/index.js";
import { loadMcpConfigFile, mcpConfigSecrets, type McpConfig } from "../tools/mcp/mcp-config.js";
import type { McpLog, RetryPolicy } from "../tools/mcp/mcp-server-connection.js";
import type { McpToolSource } from "../tools/mcp/mcp-tool-source.js";
import { createToolInventory, toolCharsForContext, type ToolInventory } from "../tools/tool-catalogue.js";
import { DEFAULT_CONTEXT_TOKENS } from "../tokens/context-window.js";
import type { Tool } from "../tools/tool.js";

/** Tools of one process. */
export interface BotTools {
  catalogue: ToolInventory;
  /** Absent without MCP_CONFIG. */
  mcp?: McpToolSource;
  /** One per enabled MCP server: a server that is down degrades the process, it does not make it unhealthy. */
  healthChecks: HealthCheck[];
  /** Secret-looking values of the MCP file (env tokens, auth headers), to keep out of logs and chats. */
  secrets: string[];
  /** Ends MCP sessions and stops stdio children. */
  close(): Promise<void>;
}

/** Builds the built-in tools of this deployment (nothing connects until a tool runs). */
export function builtinToolsFor(config: Config): Tool[] {
  return createTools({
    weatherApiBase: config.WEATHER_API_BASE,
    newsRssUrl: config.NEWS_RSS_URL,
    ...(config.SEARXNG_URL ? { searxngUrl: config.SEARXNG_URL } : {}),
    allowHosts: config.READ_URL_ALLOW_HOSTS,
    timeoutMs: config.TOOL_TIMEOUT_MS,
  });
}

/** Overrides for tests. */
export interface BotToolsOptions {
  /** Used instead of reading MCP_CONFIG. */
  mcpConfig?: McpConfig;
  mcpRetry?: RetryPolicy;
  /** Built-in tools that need more than configuration (the worker's schedule tools). */
  extraBuiltIn?: readonly Tool[];
}

/** Builds the tools (MCP servers are not contacted until `mcp.start()`); rejects with McpConfigError for a bad file. */
export async function botToolsFor(config: Config, log: McpLog, options: BotToolsOptions = {}): Promise<BotTools> {
  const builtIn = [...builtinToolsFor(config), ...(options.extraBuiltIn ?? [])];
  const mcpConfig = options.mcpConfig ?? (config.MCP_CONFIG ? loadMcpConfigFile(config.MCP_CONFIG) : undefined);
  // The MCP SDK is loaded only when there are servers: a deployment without them does not pay its start-up.
  const mcp = mcpConfig
    ? (await import("../tools/mcp/mcp-tool-source.js")).createMcpToolSource({
        config: mcpConfig,
        defaultTimeoutMs: config.TOOL_TIMEOUT_MS,
        reservedNames: builtIn.map((t) => t.name),
        // The one variable a stdio server inherits from us, so it can find `npx`, `uvx` or `node`.
        inheritedPath: process.env.PATH,
        log,
        maxToolsPerServer: config.MCP_MAX_TOOLS_PER_SERVER,
        ...(options.mcpRetry ? { retry: options.mcpRetry } : {}),
      })
    : undefined;
  const healthChecks: HealthCheck[] = (mcpConfig?.servers ?? [])
    .filter((server) => server.enabled)
    .map((server) => ({
      name: `mcp:${server.name}`,
      degraded: true,
      async check() {
        const status = mcp?.groups().find((g) => g.server === server.name)?.status;
        if (status?.state !== "ready")
          throw new Error(`${status?.state ?? "absent"}${status?.error ? `: ${status.error}` : ""}`);
      },
    }));
  return {
    catalogue: createToolInventory({
      builtIn,
      ...(mcp ? { mcp } : {}),
      maxToolsPerRequest: config.MAX_TOOLS_PER_REQUEST,
      // The context size the server reports is known only later: the configured one, else the usual default.
      maxToolChars: toolCharsForContext(config.MODEL_CONTEXT_TOKENS ?? DEFAULT_CONTEXT_TOKENS),
      log,
    }),
    ...(mcp ? { mcp } : {}),
    healthChecks,
    secrets: mcpConfig ? mcpConfigSecrets(mcpConfig) : [],
    close: async () => mcp?.close(),
  };
}
