/**
 * Tool names the OpenAI protocol accepts, unique across servers and built-ins, and the
 * per-request cap that keeps a small model's tool list short — against real server-everything.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createTools } from "../../../src/tools/index.js";
import { createToolInventory, toolCharsForContext } from "../../../src/tools/tool-catalogue.js";
import { toOpenAiTool } from "../../../src/tools/tool.js";
import { fileURLToPath } from "node:url";
import { createToolNamer, mcpToolName, uniqueToolName } from "../../../src/tools/mcp/mcp-tool-name.js";
import type { McpToolSource } from "../../../src/tools/mcp/mcp-tool-source.js";
import { everythingEntry, mcpConfig, recordingLog, startSource, waitReady } from "./mcp-kit.js";

const probeServer = fileURLToPath(new URL("./fixtures/probe-stdio-server.mjs", import.meta.url));

const builtIn = () =>
  createTools({ weatherApiBase: "http://127.0.0.1:9", newsRssUrl: "http://127.0.0.1:9/?q={query}", allowHosts: [] });

let source: McpToolSource | undefined;
afterEach(async () => {
  await source?.close();
  source = undefined;
});

describe("MCP tool names", () => {
  it("reduces names to [A-Za-z0-9_-] and 64 characters", () => {
    expect(mcpToolName("everything", "get-sum")).toBe("everything__get-sum");
    expect(mcpToolName("my server.v2", "files/read:all")).toBe("my_server_v2__files_read_all");
    expect(mcpToolName("weather", "查询 天气")).toMatch(/^weather__x[0-9a-f]{6}$/);
    expect(mcpToolName("weather", "查询")).not.toBe(mcpToolName("weather", "天气"));
    const long = mcpToolName("s".repeat(40), "t".repeat(40));
    expect(long).toHaveLength(64);
    expect(long).toMatch(/^[A-Za-z0-9_-]+$/);
  });

  it("a clash gets a suffix and still fits", () => {
    const namer = createToolNamer(["a__b"]);
    expect(uniqueToolName("a__b", namer)).toBe("a__b_2");
    expect(uniqueToolName("a__b", namer)).toBe("a__b_3");
    // A name that happens to equal a suffixed one is skipped over, not given twice.
    expect(uniqueToolName("a__b_4", namer)).toBe("a__b_4");
    expect(uniqueToolName("a__b", namer)).toBe("a__b_5");
    const long = "x".repeat(64);
    namer.taken.add(long);
    expect(uniqueToolName(long, namer)).toBe(`${"x".repeat(62)}_2`);
  });

  it("naming 20,000 tools of one name takes linear time (it took 10 s for 10,000)", () => {
    const namer = createToolNamer([]);
    const started = performance.now();
    const names = Array.from({ length: 20_000 }, () => uniqueToolName("srv__same", namer));
    expect(performance.now() - started).toBeLessThan(500);
    expect(new Set(names).size).toBe(20_000);
    expect(names.at(-1)).toBe("srv__same_20000");
  });

  it("a server listing 5,000 clashing tools gives the first MCP_MAX_TOOLS_PER_SERVER and one log line", async () => {
    let log;
    ({ source, log } = startSource(
      mcpConfig({
        many: {
          command: process.execPath,
          args: [probeServer],
          env: { PROBE_TOOL_COUNT: "5000", PROBE_TOOL_NAME: "same" },
        },
      }),
      { maxToolsPerServer: 64 },
    ));
    await waitReady(source, "many");
    const names = source.tools().map((t) => t.name);
    expect(names).toHaveLength(64);
    expect(names.slice(0, 3)).toEqual(["many__probe", "many__same", "many__same_2"]);
    source.tools();
    expect(log.lines.filter((l) => l.message.includes("MCP_MAX_TOOLS_PER_SERVER"))).toEqual([
      expect.objectContaining({ level: "warn", fields: { mcpServer: "many", listed: 5000, kept: 64 } }),
    ]);
    expect(log.lines.filter((l) => l.message.includes("renamed")).length).toBeLessThanOrEqual(63);
  });

  it("two servers whose names reduce to the same prefix get unique tool names, with a log line", async () => {
    let log;
    ({ source, log } = startSource(
      mcpConfig({
        "my.server": everythingEntry({ tools: { include: ["echo"] } }),
        "my server": everythingEntry({ tools: { include: ["echo"] } }),
      }),
    ));
    await Promise.all([waitReady(source, "my.server"), waitReady(source, "my server")]);
    expect(source.tools().map((t) => t.name)).toEqual(["my_server__echo", "my_server__echo_2"]);
    expect(log.lines.filter((l) => l.message.includes("renamed"))).toEqual([
      expect.objectContaining({
        level: "warn",
        fields: expect.objectContaining({ mcpServer: "my server", tool: "echo", given: "my_server__echo_2" }),
      }),
    ]);
  });
});

describe("tool schemas that do not fit", () => {
  it("a tool with a 4 MB input schema is left out with one log line; its neighbours stay", async () => {
    let log;
    ({ source, log } = startSource(
      mcpConfig({
        big: {
          command: process.execPath,
          args: [probeServer],
          env: { PROBE_TOOL_COUNT: "3", PROBE_SCHEMA_BYTES: String(4 * 1024 * 1024) },
        },
      }),
    ));
    await waitReady(source, "big");
    expect(source.tools().map((t) => t.name)).toEqual(["big__probe", "big__tool_2"]);
    source.tools();
    expect(log.lines.filter((l) => l.message.includes("schema is too large"))).toEqual([
      expect.objectContaining({ fields: expect.objectContaining({ mcpServer: "big", tool: "tool_1" }) }),
    ]);
  });

  it("MCP tools whose definitions together pass the context's share are left out, in config order, logged once", async () => {
    ({ source } = startSource(mcpConfig({ e: everythingEntry({ tools: { include: ["echo", "get-sum"] } }) })));
    await waitReady(source, "e");
    const log = recordingLog();
    const sizes = builtIn().reduce((sum, t) => sum + JSON.stringify(toOpenAiTool(t)).length, 0);
    const echo = JSON.stringify(toOpenAiTool(source.tools()[0]!)).length;
    const catalogue = createToolInventory({
      builtIn: builtIn(),
      mcp: source,
      maxToolsPerRequest: 16,
      maxToolChars: sizes + echo,
      log,
    });
    expect(catalogue.forRequest().map((t) => t.name)).toEqual([
      "get_weather",
      "get_news",
      "get_time",
      "read_url",
      "e__echo",
    ]);
    catalogue.forRequest();
    expect(log.lines.filter((l) => l.message.includes("do not fit the model's context"))).toEqual([
      expect.objectContaining({ fields: { leftOut: ["e__get-sum"], maxToolChars: sizes + echo } }),
    ]);
    // Half of an 8k context at 3 characters a token.
    expect(toolCharsForContext(8192)).toBe(12_288);
  });
});

describe("MAX_TOOLS_PER_REQUEST", () => {
  it("keeps the built-in tools and the first MCP tools in config order, and logs who was left out", async () => {
    ({ source } = startSource(
      mcpConfig({
        first: everythingEntry({ tools: { include: ["get-sum", "echo"] } }),
        second: everythingEntry({ tools: { exclude: ["get-env"] } }),
      }),
    ));
    await Promise.all([waitReady(source, "first"), waitReady(source, "second")]);
    const log = recordingLog();
    const catalogue = createToolInventory({ builtIn: builtIn(), mcp: source, maxToolsPerRequest: 7, log });

    const offered = catalogue.forRequest().map((t) => t.name);
    // include decides order as well as choice.
    expect(offered).toEqual([
      "get_weather",
      "get_news",
      "get_time",
      "read_url",
      "first__get-sum",
      "first__echo",
      "second__echo",
    ]);
    const leftOut = log.lines.find((l) => l.message.includes("MAX_TOOLS_PER_REQUEST"))?.fields.leftOut as string[];
    expect(leftOut[0]).toBe("second__get-annotated-message");
    expect(leftOut).not.toContain("second__get-env");
    expect(leftOut.length).toBe(source.tools().length - 3);

    // Logged once per change, not on every request.
    catalogue.forRequest();
    expect(log.lines.filter((l) => l.message.includes("MAX_TOOLS_PER_REQUEST"))).toHaveLength(1);

    // The listing for /tools shows every tool, grouped by source.
    const groups = catalogue.groups();
    expect(groups.map((g) => g.source)).toEqual(["built-in", "first", "second"]);
    expect(groups[1]).toMatchObject({ state: "ready", tools: [{ name: "first__get-sum" }, { name: "first__echo" }] });
    expect(groups[2]?.tools.map((t) => t.name)).not.toContain("second__get-env");
  });

  it("a per-chat filter runs before the cap", async () => {
    ({ source } = startSource(mcpConfig({ e: everythingEntry({ tools: { include: ["echo", "get-sum"] } }) })));
    await waitReady(source, "e");
    const catalogue = createToolInventory({
      builtIn: builtIn(),
      mcp: source,
      maxToolsPerRequest: 16,
      log: recordingLog(),
    });
    expect(catalogue.forRequest((name) => name !== "read_url" && name !== "e__echo").map((t) => t.name)).toEqual([
      "get_weather",
      "get_news",
      "get_time",
      "e__get-sum",
    ]);
  });
});
