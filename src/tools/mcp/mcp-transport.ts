/**
 * The SDK transport for one server entry. A stdio child gets `PATH` and its entry's variables, never the bot's
 * environment (tokens, API keys, REDIS_URL), and starts in an empty directory of its own unless the entry sets
 * `cwd`; with `user` it runs as that account. Remote servers: Streamable HTTP first, then the older SSE.
 */
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { chownSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { McpTransportConfig } from "./mcp-config.js";
import { resolveAccount, UserStdioTransport } from "./user-stdio-transport.js";

/** A transport to try, and what to call it in logs and health. */
export interface TransportAttempt {
  kind: "stdio" | "streamable-http" | "sse";
  transport: Transport;
  /** The last lines the child wrote to stderr (stdio only), for the log when it fails. */
  stderrTail?: () => string;
  /** The child's pid once started (stdio only). */
  pid?: () => number | null;
}

const STDERR_TAIL_CHARS = 2000;

/** The transports to try, in order, for one entry (one for stdio, Streamable HTTP then SSE for a URL). */
export function transportAttempts(
  config: McpTransportConfig,
  inheritedPath: string | undefined,
): (() => TransportAttempt)[] {
  if (config.kind === "stdio") {
    return [
      () => {
        // Never the bot's working directory: it holds `.env` and whatever else the bot reads.
        const ownDir = config.cwd ? undefined : mkdtempSync(join(tmpdir(), "mcp-server-"));
        const cwd = config.cwd ?? ownDir!;
        // PATH so `npx`, `uvx`, `node` resolve; the SDK adds only HOME, LOGNAME, SHELL, TERM and USER.
        const env = { ...(inheritedPath !== undefined ? { PATH: inheritedPath } : {}), ...config.env };
        let transport: StdioClientTransport | UserStdioTransport;
        if (config.user) {
          const account = resolveAccount(config.user);
          if (ownDir) chownSync(ownDir, account.uid, account.gid);
          transport = new UserStdioTransport({ command: config.command, args: config.args, env, cwd, account });
        } else {
          transport = new StdioClientTransport({
            command: config.command,
            args: config.args,
            env,
            cwd,
            // Piped, not inherited: a chatty server must not write into the bot's JSON log stream.
            stderr: "pipe",
          });
        }
        if (ownDir) {
          const close = transport.close.bind(transport);
          transport.close = async () => {
            await close();
            rmSync(ownDir, { recursive: true, force: true });
          };
        }
        let tail = "";
        transport.stderr?.on("data", (chunk: Buffer) => {
          tail = (tail + chunk.toString("utf8")).slice(-STDERR_TAIL_CHARS);
        });
        return { kind: "stdio", transport, stderrTail: () => tail.trim(), pid: () => transport.pid };
      },
    ];
  }
  const url = new URL(config.url);
  const requestInit: RequestInit = { headers: config.headers };
  const sse = (): TransportAttempt => ({ kind: "sse", transport: new SSEClientTransport(url, { requestInit }) });
  if (config.sseOnly) return [sse];
  return [() => ({ kind: "streamable-http", transport: new StreamableHTTPClientTransport(url, { requestInit }) }), sse];
}
