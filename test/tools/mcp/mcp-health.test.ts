/** /healthz with MCP servers: one that is down makes the worker degraded (200, naming it), not down. */
import { afterEach, describe, expect, it } from "vitest";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Registry } from "prom-client";
import { loadConfig } from "../../../src/config/load-config.js";
import { startOpsServer } from "../../../src/observability/http-server.js";
import { botToolsFor, type BotTools } from "../../../src/app/tools-for-config.js";
import { everythingEntry, mcpConfig, recordingLog, waitReady } from "./mcp-kit.js";

let tools: BotTools | undefined;
let server: Server | undefined;
afterEach(async () => {
  await tools?.close();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  tools = undefined;
  server = undefined;
});

async function healthz(): Promise<{ status: number; body: { status: string; checks: Record<string, string> } }> {
  const res = await fetch(`http://127.0.0.1:${(server!.address() as AddressInfo).port}/healthz`);
  return { status: res.status, body: (await res.json()) as { status: string; checks: Record<string, string> } };
}

describe("/healthz and MCP servers", () => {
  it("reports a server that cannot start as degraded with its name, while the others are ok", async () => {
    tools = await botToolsFor(loadConfig({}), recordingLog(), {
      mcpConfig: mcpConfig({
        everything: everythingEntry(),
        broken: { command: "/nonexistent/mcp-server" },
        off: { command: "x", enabled: false },
      }),
      mcpRetry: { initialMs: 5_000, maxMs: 5_000 },
    });
    tools.mcp?.start();
    await waitReady(tools.mcp!, "everything");
    const logged: { check?: string; reason?: string; err?: unknown }[] = [];
    server = await startOpsServer({
      port: 0,
      host: "127.0.0.1",
      registry: new Registry(),
      checks: [{ name: "redis", check: async () => {} }, ...tools.healthChecks],
      logger: { warn: (obj) => void logged.push(obj as { check?: string; reason?: string; err?: unknown }) },
    });

    const { status, body } = await healthz();
    expect(status).toBe(200);
    expect(body.status).toBe("degraded");
    expect(body.checks.redis).toBe("ok");
    expect(body.checks["mcp:everything"]).toBe("ok");
    // The probe learns which part failed; why (a path on this machine) goes to the log only.
    expect(body.checks["mcp:broken"]).toBe("unavailable");
    // One line with the reason and no stack: an MCP server away is a state, not a fault.
    expect(logged.find((l) => l.check === "mcp:broken")).toEqual({
      check: "mcp:broken",
      reason: expect.stringMatching(/^retrying: .*ENOENT/),
    });
    expect(body.checks).not.toHaveProperty("mcp:off");
  });

  it("a failing core check is still unhealthy (503)", async () => {
    tools = await botToolsFor(loadConfig({}), recordingLog(), {
      mcpConfig: mcpConfig({ broken: { command: "/nonexistent/mcp-server" } }),
    });
    tools.mcp?.start();
    server = await startOpsServer({
      port: 0,
      host: "127.0.0.1",
      registry: new Registry(),
      checks: [
        { name: "redis", check: async () => Promise.reject(new Error("connection refused")) },
        ...tools.healthChecks,
      ],
    });
    const { status, body } = await healthz();
    expect(status).toBe(503);
    expect(body.status).toBe("unhealthy");
    expect(Object.keys(body.checks)).toEqual(["redis", "mcp:broken"]);
  });
});
