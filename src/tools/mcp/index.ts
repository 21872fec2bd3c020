/** MCP servers as a source of tools: the config file, the connections and the tool adapter. */
export {
  loadMcpConfigFile,
  mcpConfigSecrets,
  parseMcpConfig,
  McpConfigError,
  type McpConfig,
  type McpServerConfig,
  type McpTransportConfig,
} from "./mcp-config.js";
export {
  createMcpToolSource,
  type McpToolGroup,
  type McpToolSource,
  type McpToolSourceOptions,
} from "./mcp-tool-source.js";
export {
  McpUnavailableError,
  type McpLog,
  type McpServerState,
  type McpServerStatus,
  type RetryPolicy,
} from "./mcp-server-connection.js";
export { formatToolResult } from "./mcp-result.js";
export { mcpToolName, uniqueToolName, MAX_TOOL_NAME_LENGTH } from "./mcp-tool-name.js";
export { stdioServerEnv } from "./mcp-transport.js";
