/**
 * MCP tools in the real agent loop: @modelcontextprotocol/server-everything over stdio (a real
 * child process speaking the real protocol), the openai SDK against the fake llama.cpp server.
 * What is asserted is what the model is sent and what it reads back.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createTools } from "../../../src/tools/index.js";
import { createToolInventory, type ToolInventory } from "../../../src/tools/tool-catalogue.js";
import type { McpToolSource } from "../../../src/tools/mcp/mcp-tool-source.js";
import { startFakeOpenAI, textAnswer, toolCallAnswer, type FakeOpenAI } from "../../fakes/openai-server.js";
import { agentDeps, collect, finishOf, user } from "../../agent/agent-harness.js";
import {
  everythingEntry,
  mcpConfig,
  recordingLog,
  startSource,
  waitFor,
  waitReady,
  type RecordingLog,
} from "./mcp-kit.js";

const BOT_SECRETS = {
  OPENAI_API_KEY: "sk-bot-secret-openai-key-123456",
  TELEGRAM_BOT_TOKEN: "123456:bot-secret-telegram-token",
  DISCORD_BOT_TOKEN: "bot-secret-discord-token-abcdef",
  ADMIN_TOKEN: "bot-secret-admin-token-987654",
  REDIS_URL: "redis://:bot-secret-redis-password@127.0.0.1:6379",
};

let fake: FakeOpenAI;
let source: McpToolSource;
let log: RecordingLog;
let catalogue: ToolInventory;
const saved: Record<string, string | undefined> = {};

beforeAll(async () => {
  // The bot's own secrets sit in this process's environment, as in production.
  for (const [key, value] of Object.entries(BOT_SECRETS)) {
    saved[key] = process.env[key];
    process.env[key] = value;
  }
  ({ source, log } = startSource(
    mcpConfig({
      everything: everythingEntry({ env: { MCP_DEMO_SETTING: "from-the-entry" } }),
      slow: everythingEntry({ timeoutMs: 600, tools: { include: ["trigger-long-running-operation"] } }),
    }),
  ));
  await Promise.all([waitReady(source, "everything"), waitReady(source, "slow")]);
  const builtIn = createTools({
    weatherApiBase: "http://127.0.0.1:9",
    newsRssUrl: "http://127.0.0.1:9/?q={query}",
    allowHosts: [],
  });
  catalogue = createToolInventory({ builtIn, mcp: source, maxToolsPerRequest: 32, log: recordingLog() });
});

afterAll(async () => {
  await source?.close();
  for (const [key, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
});

beforeEach(async () => {
  fake = await startFakeOpenAI();
});
afterEach(async () => {
  await fake.close();
});

/** The tool message the model was sent in request `index` for call `id`. */
function toolMessage(index: number, id: string): string {
  const message = fake.requests[index]?.body.messages?.find((m) => m.role === "tool" && m.tool_call_id === id);
  if (!message) throw new Error(`no tool message for ${id} in request ${index}`);
  return message.content as string;
}

describe("MCP tools over stdio in the agent loop", () => {
  it("the first request lists everything__echo with its description and schema; the echo comes back as the tool message", async () => {
    fake.script([
      toolCallAnswer([{ name: "everything__echo", arguments: { message: "你好 MCP" }, id: "callEcho" }]),
      textAnswer("It said hello."),
    ]);
    const events = await collect(agentDeps(fake.url, catalogue.forRequest()), [user("echo 你好 MCP")]);

    const offered = fake.requests[0]?.body.tools ?? [];
    const echo = offered.find((t) => t.function.name === "everything__echo");
    expect(echo?.function.description).toBe("Echoes back the input string");
    expect(echo?.function.parameters).toMatchObject({
      type: "object",
      properties: { message: { type: "string" } },
      required: ["message"],
    });
    // Built-in tools keep their names and come first; every name fits the OpenAI rule.
    expect(offered.slice(0, 4).map((t) => t.function.name)).toEqual([
      "get_weather",
      "get_news",
      "get_time",
      "read_url",
    ]);
    expect(offered.every((t) => /^[A-Za-z0-9_-]{1,64}$/.test(t.function.name))).toBe(true);

    expect(toolMessage(1, "callEcho")).toBe("Echo: 你好 MCP");
    expect(finishOf(events)).toMatchObject({ reason: "stop", text: "It said hello." });
  });

  it("two calls in one round run at the same time", async () => {
    fake.script([
      toolCallAnswer([
        { name: "everything__trigger-long-running-operation", arguments: { duration: 1, steps: 1 }, id: "callA" },
        { name: "everything__trigger-long-running-operation", arguments: { duration: 1, steps: 1 }, id: "callB" },
      ]),
      textAnswer("Both done."),
    ]);
    const started = Date.now();
    const events = await collect(agentDeps(fake.url, catalogue.forRequest()), [user("run two")]);
    const elapsed = Date.now() - started;

    const results = events.filter((e) => e.type === "tool-result");
    expect(results).toHaveLength(2);
    for (const r of results) expect(r.type === "tool-result" && r.durationMs).toBeGreaterThanOrEqual(950);
    // One after the other would take two seconds.
    expect(elapsed).toBeLessThan(1_800);
    expect(toolMessage(1, "callA")).toContain("Long running operation completed. Duration: 1 seconds");
    expect(toolMessage(1, "callB")).toContain("Long running operation completed");
  });

  it("get-env shows the server PATH and its own env, none of the bot's variables or secrets", async () => {
    fake.script([toolCallAnswer([{ name: "everything__get-env", arguments: {}, id: "callEnv" }]), textAnswer("ok")]);
    await collect(agentDeps(fake.url, catalogue.forRequest()), [user("what is your env?")]);
    const seen = toolMessage(1, "callEnv");
    const env = JSON.parse(seen) as Record<string, string>;

    expect(env.MCP_DEMO_SETTING).toBe("from-the-entry");
    expect(env.PATH).toBe(process.env.PATH);
    for (const name of Object.keys(BOT_SECRETS)) expect(env).not.toHaveProperty(name);
    for (const secret of Object.values(BOT_SECRETS)) expect(seen).not.toContain(secret.slice(-12));
    // Only PATH, the entry's env, and the SDK's short sudo-like list (HOME, LOGNAME, SHELL, TERM, USER).
    const allowed = new Set(["PATH", "MCP_DEMO_SETTING", "HOME", "LOGNAME", "SHELL", "TERM", "USER"]);
    expect(Object.keys(env).filter((k) => !allowed.has(k))).toEqual([]);
  });

  it("arguments that break the tool's JSON Schema come back naming the field, without reaching the server", async () => {
    fake.script([
      toolCallAnswer([{ name: "everything__get-sum", arguments: { a: "two", b: 3 }, id: "callSum" }]),
      textAnswer("ok"),
    ]);
    const events = await collect(agentDeps(fake.url, catalogue.forRequest()), [user("2+3")]);
    const seen = toolMessage(1, "callSum");
    expect(seen).toContain('invalid arguments for everything__get-sum: "a" must be number');
    expect(seen).toContain("Parameters: a (number, required), b (number, required).");
    expect(events.some((e) => e.type === "tool-result" && !e.ok)).toBe(true);
  });

  it("a structured result reaches the model as JSON, once; an image as one line", async () => {
    fake.script([
      toolCallAnswer([
        { name: "everything__get-structured-content", arguments: { location: "Chicago" }, id: "callWeather" },
        { name: "everything__get-tiny-image", arguments: {}, id: "callImage" },
      ]),
      textAnswer("ok"),
    ]);
    await collect(agentDeps(fake.url, catalogue.forRequest()), [user("weather and a picture")]);
    expect(JSON.parse(toolMessage(1, "callWeather"))).toEqual({
      temperature: 36,
      conditions: "Light rain / drizzle",
      humidity: 82,
    });
    const image = toolMessage(1, "callImage");
    expect(image).toMatch(/^\[image: image\/png, \d+\.\d kB\]$/m);
    expect(image).not.toMatch(/[A-Za-z0-9+/]{200}/); // no base64 for a small model to choke on
  });

  it("a call longer than the server's timeoutMs becomes a timeout observation at that time", async () => {
    fake.script([
      toolCallAnswer([
        { name: "slow__trigger-long-running-operation", arguments: { duration: 10, steps: 10 }, id: "callSlow" },
      ]),
      textAnswer("too slow"),
    ]);
    const started = Date.now();
    const events = await collect(agentDeps(fake.url, catalogue.forRequest()), [user("run a long one")]);
    const result = events.find((e) => e.type === "tool-result");
    expect(result?.type === "tool-result" && result.durationMs).toBeGreaterThanOrEqual(550);
    expect(Date.now() - started).toBeLessThan(2_500);
    expect(toolMessage(1, "callSlow")).toMatch(/timed out after 600 ms/);
    // The server is still there for the next call.
    expect(source.groups().find((g) => g.server === "slow")?.status.state).toBe("ready");
  });

  it("/stop cancels a running call at once, and the server keeps serving", async () => {
    fake.script([
      toolCallAnswer([
        { name: "everything__trigger-long-running-operation", arguments: { duration: 10, steps: 10 }, id: "callLong" },
      ]),
    ]);
    const stop = new AbortController();
    setTimeout(() => stop.abort(), 300);
    const started = Date.now();
    const events = await collect(agentDeps(fake.url, catalogue.forRequest()), [user("long")], stop.signal);
    expect(finishOf(events).reason).toBe("aborted");
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(fake.requests).toHaveLength(1); // no further round after /stop

    const echo = catalogue.forRequest().find((t) => t.name === "everything__echo");
    await expect(
      echo && "parameters" in echo
        ? echo.execute({ message: "still here" }, { signal: new AbortController().signal })
        : undefined,
    ).resolves.toBe("Echo: still here");
  });

  it("the SDK's default 60 s is not used: each tool carries its server's timeout", () => {
    const tools = catalogue.forRequest();
    expect(tools.find((t) => t.name === "everything__echo")?.timeoutMs).toBe(5_000);
    expect(tools.find((t) => t.name === "slow__trigger-long-running-operation")?.timeoutMs).toBe(600);
    // include kept exactly the one tool of "slow"
    expect(tools.filter((t) => t.name.startsWith("slow__")).map((t) => t.name)).toEqual([
      "slow__trigger-long-running-operation",
    ]);
    expect(log.lines.some((l) => l.message.includes("include/exclude") && l.fields.mcpServer === "slow")).toBe(true);
  });
});

describe("a stdio server that dies", () => {
  it("a server killed mid-call becomes an observation, its tools go away, and it comes back after a restart", async () => {
    const { source: own } = startSource(mcpConfig({ everything: everythingEntry() }), {
      retry: { initialMs: 300, maxMs: 300 },
    });
    try {
      await waitReady(own, "everything");
      const firstPid = own.groups()[0]?.status.pid;
      expect(firstPid).toBeGreaterThan(0);
      const mcpCatalogue = createToolInventory({ builtIn: [], mcp: own, maxToolsPerRequest: 16, log: recordingLog() });

      fake.script([
        toolCallAnswer([
          {
            name: "everything__trigger-long-running-operation",
            arguments: { duration: 5, steps: 5 },
            id: "callKilled",
          },
        ]),
        textAnswer("The tool crashed."),
      ]);
      setTimeout(() => process.kill(firstPid!, "SIGKILL"), 300);
      const started = Date.now();
      const events = await collect(agentDeps(fake.url, mcpCatalogue.forRequest()), [user("long")]);
      expect(Date.now() - started).toBeLessThan(3_000);
      expect(toolMessage(1, "callKilled")).toMatch(
        /^Error: everything__trigger-long-running-operation failed: the MCP server "everything" stopped during the call/,
      );
      expect(finishOf(events).reason).toBe("stop");

      // While it is away its tools are absent and health names it.
      await waitFor(() => own.groups()[0]?.status.state === "retrying", 2_000, "the server to be marked down");
      expect(own.tools()).toEqual([]);
      expect(own.groups()[0]?.status.error).toMatch(/connection closed/);

      // The restart: a new child, the tools back, and a call works again.
      await waitReady(own, "everything");
      expect(own.groups()[0]?.status.pid).not.toBe(firstPid);
      fake.script([
        toolCallAnswer([{ name: "everything__echo", arguments: { message: "back" }, id: "callBack" }]),
        textAnswer("ok"),
      ]);
      const before = fake.requests.length;
      await collect(agentDeps(fake.url, mcpCatalogue.forRequest()), [user("echo back")]);
      expect(toolMessage(before + 1, "callBack")).toBe("Echo: back");
    } finally {
      await own.close();
    }
  });

  it("a server that cannot start is retried with backoff and never blocks: its tools are just absent", async () => {
    const { source: own, log: ownLog } = startSource(
      mcpConfig({ missing: { command: "/nonexistent/mcp-server-binary" } }),
      {
        retry: { initialMs: 100, maxMs: 400 },
      },
    );
    try {
      await waitFor(
        () => ownLog.lines.filter((l) => l.message.includes("unavailable")).length >= 3,
        5_000,
        "three failed attempts",
      );
      const delays = ownLog.lines.filter((l) => l.message.includes("unavailable")).map((l) => l.fields.retryInMs);
      expect(delays.slice(0, 3)).toEqual([100, 200, 400]);
      expect(own.tools()).toEqual([]);
      expect(own.groups()[0]?.status).toMatchObject({
        name: "missing",
        state: "retrying",
        error: expect.stringMatching(/ENOENT/),
      });
    } finally {
      await own.close();
    }
  });
});
