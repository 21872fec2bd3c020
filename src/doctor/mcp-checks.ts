/**
 * The doctor's MCP group: MCP_CONFIG parses, and each enabled server starts and lists at least one tool
 * after its include/exclude filter. Each is connected once, with no retries, and closed again.
 */
import { findingsOf, type SetupFinding } from "../contracts/setup-finding.js";
import { loadMcpConfigFile, McpConfigError, type McpServerConfig } from "../tools/mcp/mcp-config.js";
import { createMcpServerConnection } from "../tools/mcp/mcp-server-connection.js";

const f = findingsOf("MCP servers");
const silent = { info: () => undefined, warn: () => undefined };

/** What to change when a server does not start, by how it is reached. */
function startFix(server: McpServerConfig): string {
  const t = server.transport;
  return t.kind === "stdio"
    ? `Run \`${[t.command, ...t.args].join(" ")}\` in a shell on this machine: the command must exist here (in Docker: inside the worker's image) and speak MCP on stdin/stdout.`
    : `Check that ${t.url} answers MCP (Streamable HTTP or SSE) and that the entry's "headers" carry what the server expects.`;
}

/** Checks one enabled server: it connects and lists tools. */
async function checkServer(
  server: McpServerConfig,
  opts: { inheritedPath: string | undefined; connectTimeoutMs?: number },
): Promise<SetupFinding> {
  const connection = createMcpServerConnection({
    config: server,
    inheritedPath: opts.inheritedPath,
    clientInfo: { name: "local-llm-chatbot-doctor", version: "0.1.0" },
    log: silent,
    // One attempt: the doctor reports, it does not wait for a server to come back.
    retry: { initialMs: 3_600_000, maxMs: 3_600_000 },
    connectTimeoutMs: opts.connectTimeoutMs ?? 15_000,
    onToolsChanged: () => undefined,
  });
  try {
    connection.start();
    await connection.settled();
    const status = connection.status();
    if (status.state !== "ready")
      return f.fail(server.name, `did not start: ${status.error ?? status.state}`, startFix(server));
    if (status.tools === 0) {
      return f.fail(
        server.name,
        `connected over ${status.transport ?? "?"} but offers no tools`,
        'Check the entry\'s "tools": {"include": [...], "exclude": [...]} against the tool names the server lists.',
      );
    }
    return f.pass(
      server.name,
      `connected over ${status.transport ?? "?"}, ${status.tools} tool${status.tools === 1 ? "" : "s"}: ${connection
        .tools()
        .map((t) => t.name)
        .slice(0, 8)
        .join(", ")}`,
    );
  } finally {
    await connection.close();
  }
}

/** Checks the MCP servers file and every enabled server in it. */
export async function checkMcpServers(
  path: string,
  opts: { inheritedPath: string | undefined; connectTimeoutMs?: number },
): Promise<SetupFinding[]> {
  let servers: McpServerConfig[];
  try {
    servers = loadMcpConfigFile(path).servers;
  } catch (error) {
    if (error instanceof McpConfigError)
      return [
        f.fail("file", error.message, "Fix the file MCP_CONFIG names; the README's MCP section shows the format."),
      ];
    throw error;
  }
  const findings: SetupFinding[] = [
    f.pass("file", `${servers.length} server${servers.length === 1 ? "" : "s"} in ${path}`),
  ];
  for (const server of servers) {
    if (!server.enabled) {
      findings.push(f.skip(server.name, "disabled in the file"));
      continue;
    }
    findings.push(await checkServer(server, opts));
    if (server.transport.kind === "stdio" && server.transport.user === undefined)
      findings.push(
        f.warn(
          `${server.name} user`,
          "this stdio server runs as the bot's own user: it can read whatever the bot can, /proc/<bot pid>/environ (the tokens and keys) included",
          'Trust it as you trust the bot, or give its entry a "user" to run as (the bot must be allowed to switch users), or run it as an HTTP server in its own container (docs/security.md).',
        ),
      );
  }
  return findings;
}
