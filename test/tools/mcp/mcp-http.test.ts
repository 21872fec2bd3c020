/**
 * Remote MCP servers: a Streamable HTTP server built with the SDK inside the test (and an
 * SSE-only one for the fallback), reached by the real client, driven by the real agent loop
 * against the fake model server.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createToolInventory } from "../../../src/tools/tool-catalogue.js";
import type { McpToolSource } from "../../../src/tools/mcp/mcp-tool-source.js";
import { startFakeOpenAI, textAnswer, toolCallAnswer, type FakeOpenAI } from "../../fakes/openai-server.js";
import { agentDeps, collect, finishOf, user } from "../../agent/agent-harness.js";
import { startTestMcpHttpServer, type TestMcpHttpServer } from "./mcp-http-server.js";
import { mcpConfig, recordingLog, startSource, waitFor, waitReady, type RecordingLog } from "./mcp-kit.js";

let fake: FakeOpenAI;
let remote: TestMcpHttpServer;
let source: McpToolSource | undefined;
beforeEach(async () => {
  fake = await startFakeOpenAI();
});
afterEach(async () => {
  await source?.close();
  source = undefined;
  await remote?.close();
  await fake.close();
});

async function connect(entry: Record<string, unknown> = {}): Promise<{ source: McpToolSource; log: RecordingLog }> {
  const started = startSource(
    mcpConfig({ remote: { url: remote.url, headers: { Authorization: "Bearer remote-test-token" }, ...entry } }),
  );
  source = started.source;
  await waitReady(started.source, "remote");
  return started;
}

function toolMessage(index: number, id: string): string {
  const message = fake.requests[index]?.body.messages?.find((m) => m.role === "tool" && m.tool_call_id === id);
  if (!message) throw new Error(`no tool message for ${id} in request ${index}`);
  return message.content as string;
}

function catalogueOf(mcp: McpToolSource) {
  return createToolInventory({ builtIn: [], mcp, maxToolsPerRequest: 16, log: recordingLog() });
}

describe("a Streamable HTTP server", () => {
  beforeEach(async () => {
    remote = await startTestMcpHttpServer({ transport: "streamable-http" });
  });

  it("is reached with the configured headers and its tools answer in the loop", async () => {
    const { source: mcp } = await connect();
    expect(mcp.groups()[0]?.status).toMatchObject({ state: "ready", transport: "streamable-http", tools: 3 });
    expect(remote.authorizations.length).toBeGreaterThan(0);
    expect(remote.authorizations.every((a) => a === "Bearer remote-test-token")).toBe(true);

    fake.script([
      toolCallAnswer([{ name: "remote__shout", arguments: { text: "hello" }, id: "callShout" }]),
      textAnswer("HELLO it is."),
    ]);
    const events = await collect(agentDeps(fake.url, catalogueOf(mcp).forRequest()), [user("shout hello")]);
    expect(fake.requests[0]?.body.tools?.map((t) => t.function.name)).toEqual([
      "remote__shout",
      "remote__wait",
      "remote__fail",
    ]);
    expect(toolMessage(1, "callShout")).toBe("HELLO");
    expect(finishOf(events).text).toBe("HELLO it is.");
  });

  it("notifications/tools/list_changed adds the new tool to the next request", async () => {
    const { source: mcp, log } = await connect();
    const catalogue = catalogueOf(mcp);
    expect(catalogue.forRequest().map((t) => t.name)).not.toContain("remote__late");

    remote.addTool("late", "I arrived late");
    await waitFor(() => mcp.tools().some((t) => t.name === "remote__late"), 5_000, "the new tool");
    expect(log.lines.some((l) => l.message === "MCP server changed its tool list")).toBe(true);

    fake.script([toolCallAnswer([{ name: "remote__late", arguments: {}, id: "callLate" }]), textAnswer("ok")]);
    await collect(agentDeps(fake.url, catalogue.forRequest()), [user("use the new one")]);
    expect(fake.requests[0]?.body.tools?.map((t) => t.function.name)).toContain("remote__late");
    expect(toolMessage(1, "callLate")).toBe("I arrived late");
  });

  it("a flood of list_changed costs a few listings, not one per notification", async () => {
    const { source: mcp } = await connect();
    const listings = () => remote.methods.filter((m) => m === "tools/list").length;
    const before = listings();
    remote.announceToolsChanged(50);
    await waitFor(() => listings() > before, 3_000, "a refresh");
    // Kept sleep: the rest of the burst would start more listings, and the client shows no moment after which none can.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(listings() - before).toBeLessThanOrEqual(3);
    expect(mcp.tools()).toHaveLength(3);
  });

  it("/stop sends the cancellation to the server", async () => {
    const { source: mcp } = await connect();
    fake.script([toolCallAnswer([{ name: "remote__wait", arguments: { label: "stopped-by-user" }, id: "callWait" }])]);
    const stop = new AbortController();
    setTimeout(() => stop.abort(new Error("the user sent /stop")), 300);
    const started = Date.now();
    const events = await collect(agentDeps(fake.url, catalogueOf(mcp).forRequest()), [user("wait")], stop.signal);
    expect(finishOf(events).reason).toBe("aborted");
    expect(Date.now() - started).toBeLessThan(1_500);
    await waitFor(() => remote.cancelled.length > 0, 3_000, "the server to see the cancellation");
    expect(remote.cancelled[0]).toMatch(/^stopped-by-user: /);
  });

  it("a call past timeoutMs becomes a timeout observation, and the server is told to stop", async () => {
    const { source: mcp } = await connect({ timeoutMs: 400 });
    fake.script([
      toolCallAnswer([{ name: "remote__wait", arguments: { label: "too-slow" }, id: "callSlow" }]),
      textAnswer("It took too long."),
    ]);
    const started = Date.now();
    await collect(agentDeps(fake.url, catalogueOf(mcp).forRequest()), [user("wait")]);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(toolMessage(1, "callSlow")).toMatch(/^Error: remote__wait timed out after 400 ms/);
    await waitFor(
      () => remote.cancelled.some((c) => c.startsWith("too-slow")),
      3_000,
      "the server to see the cancellation",
    );
  });

  it("an isError result reaches the model as an error observation", async () => {
    const { source: mcp } = await connect();
    fake.script([
      toolCallAnswer([{ name: "remote__fail", arguments: {}, id: "callFail" }]),
      textAnswer("The backend refused."),
    ]);
    const events = await collect(agentDeps(fake.url, catalogueOf(mcp).forRequest()), [user("try it")]);
    expect(toolMessage(1, "callFail")).toBe("Error: remote__fail failed: the backend said no");
    expect(events.find((e) => e.type === "tool-result")).toMatchObject({ ok: false });
    expect(finishOf(events).reason).toBe("stop");
  });

  it("a remote server that goes away becomes an observation, its tools go, and it is reconnected once back", async () => {
    const { source: mcp } = await connect();
    const port = Number(new URL(remote.url).port);
    await remote.close();

    fake.script([
      toolCallAnswer([{ name: "remote__shout", arguments: { text: "anyone?" }, id: "callGone" }]),
      textAnswer("The service is down."),
    ]);
    const events = await collect(agentDeps(fake.url, catalogueOf(mcp).forRequest()), [user("shout")]);
    expect(toolMessage(1, "callGone")).toMatch(
      /^Error: remote__shout failed: the MCP server "remote" is not connected right now \(the server stopped answering/,
    );
    expect(finishOf(events).text).toBe("The service is down.");
    expect(mcp.tools()).toEqual([]);
    expect(mcp.groups()[0]?.status.state).toBe("retrying");

    remote = await startTestMcpHttpServer({ transport: "streamable-http", port });
    await waitReady(mcp, "remote");
    fake.script([
      toolCallAnswer([{ name: "remote__shout", arguments: { text: "back" }, id: "callBack" }]),
      textAnswer("ok"),
    ]);
    const before = fake.requests.length;
    await collect(agentDeps(fake.url, catalogueOf(mcp).forRequest()), [user("shout again")]);
    expect(toolMessage(before + 1, "callBack")).toBe("BACK");
  });

  it("shutdown ends the session on the server", async () => {
    const { source: mcp } = await connect();
    expect(remote.openSessions()).toBe(1);
    await mcp.close();
    await waitFor(() => remote.openSessions() === 0, 3_000, "the session to end");
    expect(mcp.tools()).toEqual([]);
  });
});

describe("an SSE-only server", () => {
  beforeEach(async () => {
    remote = await startTestMcpHttpServer({ transport: "sse" });
  });

  it("is reached over the older SSE transport after Streamable HTTP is refused", async () => {
    const { source: mcp } = await connect();
    expect(mcp.groups()[0]?.status).toMatchObject({ state: "ready", transport: "sse" });
    fake.script([
      toolCallAnswer([{ name: "remote__shout", arguments: { text: "over sse" }, id: "callSse" }]),
      textAnswer("ok"),
    ]);
    await collect(agentDeps(fake.url, catalogueOf(mcp).forRequest()), [user("shout")]);
    expect(toolMessage(1, "callSse")).toBe("OVER SSE");
    expect(remote.authorizations.every((a) => a === "Bearer remote-test-token")).toBe(true);
  });
});
