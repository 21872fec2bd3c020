/**
 * A real MCP server over HTTP for the tests, built with the SDK's own server classes on a
 * loopback port: Streamable HTTP with sessions (the current transport), or only the older SSE
 * transport (to prove the client falls back). It records what a test needs to see from the
 * server's side: cancellations received, the Authorization header, live sessions.
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js";
import { z } from "zod";

/** The running test server. */
export interface TestMcpHttpServer {
  /** The URL to put in `mcpServers.<name>.url`. */
  url: string;
  /** Cancellations the server's tool handlers saw (by tool call), with the reason the client sent. */
  cancelled: string[];
  /** Authorization headers of every request, in order. */
  authorizations: (string | undefined)[];
  /** JSON-RPC methods the client sent over Streamable HTTP, in order (`tools/list`, `tools/call`…). */
  methods: string[];
  /** Sends notifications/tools/list_changed `times` times on every session, without changing anything. */
  announceToolsChanged(times: number): void;
  /** Sessions currently open (Streamable HTTP) or streams (SSE). */
  openSessions(): number;
  /** Registers a tool on every connected session: the SDK then sends notifications/tools/list_changed. */
  addTool(name: string, reply: string): void;
  close(): Promise<void>;
}

/** Starts the server; `transport: "sse"` answers only the old SSE transport (Streamable HTTP gets 405). */
export async function startTestMcpHttpServer(
  opts: { transport: "streamable-http" | "sse"; port?: number } = { transport: "streamable-http" },
): Promise<TestMcpHttpServer> {
  const cancelled: string[] = [];
  const authorizations: (string | undefined)[] = [];
  const methods: string[] = [];
  const servers = new Set<McpServer>();
  const added: [string, string][] = [];
  const streamable = new Map<string, StreamableHTTPServerTransport>();
  const sse = new Map<string, SSEServerTransport>();

  function newServer(): McpServer {
    const server = new McpServer(
      { name: "test-http", version: "1.0.0" },
      { capabilities: { tools: { listChanged: true } } },
    );
    server.registerTool(
      "shout",
      { description: "Upper-cases a text", inputSchema: { text: z.string() } },
      async ({ text }) => ({
        content: [{ type: "text", text: text.toUpperCase() }],
      }),
    );
    server.registerTool(
      "wait",
      { description: "Waits until cancelled (at most 10 s)", inputSchema: { label: z.string() } },
      async ({ label }, extra) => {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 10_000);
          extra.signal.addEventListener("abort", () => {
            clearTimeout(timer);
            cancelled.push(`${label}: ${String(extra.signal.reason)}`);
            resolve();
          });
        });
        return { content: [{ type: "text", text: `waited for ${label}` }] };
      },
    );
    server.registerTool("fail", { description: "Always reports an error", inputSchema: {} }, async () => ({
      isError: true,
      content: [{ type: "text", text: "the backend said no" }],
    }));
    for (const [name, reply] of added) registerAdded(server, name, reply);
    servers.add(server);
    return server;
  }

  function registerAdded(server: McpServer, name: string, reply: string): void {
    server.registerTool(name, { description: `Added later: ${name}`, inputSchema: {} }, async () => ({
      content: [{ type: "text", text: reply }],
    }));
  }

  async function handleStreamable(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = req.method === "POST" ? await readJson(req) : undefined;
    for (const message of [body].flat()) {
      if (message && typeof message === "object" && typeof (message as { method?: unknown }).method === "string") {
        methods.push((message as { method: string }).method);
      }
    }
    const id = req.headers["mcp-session-id"];
    const existing = typeof id === "string" ? streamable.get(id) : undefined;
    if (existing) return existing.handleRequest(req, res, body);
    if (req.method !== "POST") {
      res.writeHead(400).end("no session");
      return;
    }
    const server = newServer();
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sessionId) => void streamable.set(sessionId, transport),
    });
    transport.onclose = () => {
      if (transport.sessionId) streamable.delete(transport.sessionId);
      servers.delete(server);
    };
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  }

  async function handleSse(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    if (req.method === "GET" && url.pathname === "/mcp") {
      const transport = new SSEServerTransport("/messages", res);
      const server = newServer();
      sse.set(transport.sessionId, transport);
      res.on("close", () => {
        sse.delete(transport.sessionId);
        servers.delete(server);
      });
      await server.connect(transport);
      return;
    }
    if (req.method === "POST" && url.pathname === "/messages") {
      const transport = sse.get(url.searchParams.get("sessionId") ?? "");
      if (!transport) {
        res.writeHead(404).end("unknown session");
        return;
      }
      await transport.handlePostMessage(req, res);
      return;
    }
    // What an SSE-only server says to a Streamable HTTP POST.
    res.writeHead(405, { allow: "GET" }).end("method not allowed");
  }

  const http = createServer((req, res) => {
    authorizations.push(req.headers.authorization);
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const handled =
      opts.transport === "sse"
        ? handleSse(req, res, url)
        : url.pathname === "/mcp"
          ? handleStreamable(req, res)
          : undefined;
    if (!handled) {
      res.writeHead(404).end();
      return;
    }
    handled.catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(error));
    });
  });
  await new Promise<void>((resolve) => http.listen(opts.port ?? 0, "127.0.0.1", resolve));
  const { port } = http.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/mcp`,
    cancelled,
    authorizations,
    methods,
    announceToolsChanged(times) {
      for (const server of servers) for (let i = 0; i < times; i++) server.sendToolListChanged();
    },
    openSessions: () => (opts.transport === "sse" ? sse.size : streamable.size),
    addTool(name, reply) {
      added.push([name, reply]);
      for (const server of servers) registerAdded(server, name, reply);
    },
    async close() {
      for (const server of servers) await server.close().catch(() => undefined);
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  try {
    return JSON.parse(text);
  } catch {
    return undefined; // the SDK answers a body it cannot parse itself
  }
}
