/**
 * One MCP server's life: connect in the background, list its tools (again on `tools/list_changed`), and when
 * it fails to start or dies, drop its tools and retry with exponential backoff. Only `call` throws.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { SseError } from "@modelcontextprotocol/sdk/client/sse.js";
import {
  ToolListChangedNotificationSchema,
  type CallToolResult,
  type Tool as McpTool,
} from "@modelcontextprotocol/sdk/types.js";
import type { McpServerConfig } from "./mcp-config.js";
import { transportAttempts, type TransportAttempt } from "./mcp-transport.js";

/** The two log levels the MCP code uses (a pino logger fits). */
export interface McpLog {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}

/** A server's tool as it listed it (after the entry's include/exclude). */
export type McpToolInfo = Pick<McpTool, "name" | "description" | "inputSchema">;

/** `ready`: connected, tools listed. `retrying`: failed or lost, another attempt is scheduled. */
type McpServerState = "disabled" | "connecting" | "ready" | "retrying" | "closed";

/** What `/healthz` and the tool catalogue show about a server. */
export interface McpServerStatus {
  name: string;
  state: McpServerState;
  transport?: TransportAttempt["kind"];
  /** Why it is not ready (the last failure). */
  error?: string;
  tools: number;
  /** The stdio child's pid while it runs. */
  pid?: number;
}

/** Backoff between attempts: `initialMs`, doubling, at most `maxMs`. */
export interface RetryPolicy {
  initialMs: number;
  maxMs: number;
}

/** Everything one connection needs. */
interface McpServerConnectionOptions {
  config: McpServerConfig;
  /** PATH for stdio children. */
  inheritedPath: string | undefined;
  clientInfo: { name: string; version: string };
  log: McpLog;
  retry?: RetryPolicy;
  /** Longest wait for the initialize handshake and the first tool list. */
  connectTimeoutMs?: number;
  /** Called whenever the server's tool list or readiness changed (listed, refreshed, ready, dropped). */
  onToolsChanged(): void;
}

/** A managed connection to one server. */
export interface McpServerConnection {
  readonly name: string;
  /** Starts connecting in the background (returns at once). */
  start(): void;
  /** Resolves once the first attempt after `start` ended, connected or not. */
  settled(): Promise<void>;
  status(): McpServerStatus;
  tools(): readonly McpToolInfo[];
  /** Calls a tool by the server's own name; rejects when not connected, on timeout, cancellation or loss. */
  call(
    tool: string,
    args: Record<string, unknown>,
    opts: { signal: AbortSignal; timeoutMs: number },
  ): Promise<CallToolResult>;
  /** Ends the session and stops a stdio child; no reconnect afterwards. */
  close(): Promise<void>;
}

/** Creates the connection (idle until `start`). */
export function createMcpServerConnection(opts: McpServerConnectionOptions): McpServerConnection {
  const { config, log } = opts;
  const name = config.name;
  const retry = opts.retry ?? { initialMs: 1000, maxMs: 60_000 };
  const connectTimeoutMs = opts.connectTimeoutMs ?? 30_000;
  let state: McpServerState = config.enabled ? "connecting" : "disabled";
  let client: Client | undefined;
  let attempt: TransportAttempt | undefined;
  let tools: McpToolInfo[] = [];
  let lastError: string | undefined;
  let failures = 0;
  let retryTimer: ReturnType<typeof setTimeout> | undefined;
  let generation = 0;
  let markSettled: () => void = () => undefined;
  const firstAttempt = new Promise<void>((resolve) => {
    markSettled = resolve;
  });

  const stale = (gen: number): boolean => state === "closed" || gen !== generation;

  async function connect(): Promise<void> {
    const gen = ++generation;
    let failure = "no transport worked";
    let stderr: string | undefined;
    for (const make of transportAttempts(config.transport, opts.inheritedPath)) {
      let candidate: TransportAttempt;
      try {
        candidate = make();
      } catch (error) {
        failure = describeError(error);
        continue;
      }
      const c = new Client(opts.clientInfo, { capabilities: {} });
      try {
        await c.connect(candidate.transport, { timeout: connectTimeoutMs });
      } catch (error) {
        stderr = candidate.stderrTail?.() || undefined;
        failure = `${candidate.kind}: ${describeError(error)}`;
        await c.close().catch(() => undefined);
        if (stale(gen)) return;
        continue;
      }
      if (stale(gen)) {
        await c.close().catch(() => undefined);
        return;
      }
      client = c;
      attempt = candidate;
      c.onclose = () => {
        if (client === c && state !== "closed") lost("the connection closed", candidate.stderrTail?.());
      };
      c.setNotificationHandler(ToolListChangedNotificationSchema, () => void refreshAfterChange(c));
      try {
        await refresh(c);
      } catch (error) {
        if (client === c) lost(`listing tools failed: ${describeError(error)}`);
        await c.close().catch(() => undefined);
        return;
      }
      if (client !== c) return;
      state = "ready";
      failures = 0;
      lastError = undefined;
      opts.onToolsChanged(); // again, now that the state says ready
      markSettled();
      log.info({ mcpServer: name, transport: candidate.kind, tools: tools.map((t) => t.name) }, "MCP server connected");
      return;
    }
    scheduleRetry(failure, stderr);
  }

  async function refresh(c: Client): Promise<void> {
    const listed: McpToolInfo[] = [];
    let cursor: string | undefined;
    // Paginated; bounded so a server that hands out cursors forever cannot hold the worker.
    for (let page = 0; page < 50; page++) {
      const result = await c.listTools(cursor ? { cursor } : undefined, { timeout: connectTimeoutMs });
      listed.push(
        ...result.tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema })),
      );
      cursor = result.nextCursor;
      if (!cursor) break;
    }
    if (client !== c) return;
    tools = applyFilters(listed);
    opts.onToolsChanged();
  }

  let refreshing = false;
  let refreshAgain = false;

  /** One refresh at a time: a server that floods list_changed costs one listing per burst, not one per notice. */
  async function refreshAfterChange(c: Client): Promise<void> {
    if (refreshing) {
      refreshAgain = true;
      return;
    }
    refreshing = true;
    try {
      do {
        refreshAgain = false;
        await refresh(c);
      } while (refreshAgain && client === c);
      log.info({ mcpServer: name, tools: tools.map((t) => t.name) }, "MCP server changed its tool list");
    } catch (error) {
      // The old list stays: a failed refresh is no reason to take working tools away.
      log.warn(
        { mcpServer: name, err: describeError(error) },
        "MCP server announced new tools but listing them failed",
      );
    } finally {
      refreshing = false;
    }
  }

  /** include (in its order) then exclude; a name the server does not have is logged, never silently ignored. */
  function applyFilters(listed: McpToolInfo[]): McpToolInfo[] {
    const byName = new Map(listed.map((t) => [t.name, t]));
    let chosen = listed;
    if (config.include) {
      const missing = config.include.filter((n) => !byName.has(n));
      if (missing.length) log.warn({ mcpServer: name, missing }, "MCP server has no tool by these included names");
      chosen = config.include.flatMap((n) => byName.get(n) ?? []);
    }
    const exclude = new Set(config.exclude);
    const left = chosen.filter((t) => !exclude.has(t.name));
    const filtered = listed.filter((t) => !left.includes(t)).map((t) => t.name);
    if (filtered.length)
      log.info({ mcpServer: name, filteredOut: filtered }, "MCP tools left out by the server's include/exclude");
    return left;
  }

  function lost(reason: string, stderr?: string): void {
    const c = client;
    client = undefined;
    attempt = undefined;
    tools = [];
    opts.onToolsChanged();
    void c?.close().catch(() => undefined);
    scheduleRetry(reason, stderr);
  }

  /** `reason` is shown on /healthz; the child's stderr (which may quote credentials) only goes to the scrubbed log. */
  function scheduleRetry(reason: string, stderr?: string): void {
    markSettled();
    if (state === "closed") return;
    failures++;
    state = "retrying";
    lastError = reason;
    const delay = Math.min(retry.maxMs, retry.initialMs * 2 ** (failures - 1));
    log.warn(
      { mcpServer: name, err: reason, retryInMs: delay, failures, ...(stderr ? { stderr: stderr.slice(-1000) } : {}) },
      "MCP server unavailable; its tools are absent until it is back",
    );
    clearTimeout(retryTimer);
    retryTimer = setTimeout(() => void connect(), delay);
    retryTimer.unref?.();
  }

  return {
    name,
    start() {
      if (state !== "connecting" || generation > 0) return;
      void connect();
    },
    settled: () => (config.enabled ? firstAttempt : Promise.resolve()),
    status() {
      const pid = attempt?.pid?.();
      return {
        name,
        state,
        ...(attempt ? { transport: attempt.kind } : {}),
        ...(lastError && state !== "ready" ? { error: lastError } : {}),
        tools: tools.length,
        ...(pid ? { pid } : {}),
      };
    },
    tools: () => tools,
    async call(tool, args, { signal, timeoutMs }) {
      const c = client;
      if (!c || state !== "ready") throw new McpUnavailableError(name, lastError);
      try {
        // The SDK sends notifications/cancelled when `signal` aborts and when `timeout` passes.
        return (await c.callTool({ name: tool, arguments: args }, undefined, {
          signal,
          timeout: timeoutMs,
        })) as CallToolResult;
      } catch (error) {
        // A remote server that went away never "closes" an HTTP session: a failed request is how we learn it.
        if (client === c && isTransportLoss(error)) {
          const reason = `the server stopped answering (${describeError(error)})`;
          lost(reason);
          throw new McpUnavailableError(name, reason);
        }
        throw error;
      }
    },
    async close() {
      state = "closed";
      markSettled();
      generation++;
      clearTimeout(retryTimer);
      const c = client;
      const open = attempt;
      client = undefined;
      attempt = undefined;
      tools = [];
      if (open?.transport instanceof StreamableHTTPClientTransport) {
        // Lets the server free the session now instead of when it times out.
        await open.transport.terminateSession().catch(() => undefined);
      }
      await c?.close().catch(() => undefined);
    },
  };
}

/** A call to a server that is not connected right now. */
export class McpUnavailableError extends Error {
  override readonly name = "McpUnavailableError";
  constructor(
    readonly server: string,
    readonly reason: string | undefined,
  ) {
    super(`the MCP server "${server}" is not connected right now${reason ? ` (${reason})` : ""}`);
  }
}

/** A failure of the HTTP transport itself (refused, reset, unknown session), not an answer of the server. */
function isTransportLoss(error: unknown): boolean {
  if (error instanceof StreamableHTTPError || error instanceof SseError) return true;
  return error instanceof TypeError && /fetch failed|terminated|socket/i.test(error.message);
}

function describeError(error: unknown): string {
  return (error instanceof Error ? error.message || error.name : String(error)).slice(0, 500);
}
