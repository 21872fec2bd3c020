/**
 * The doctor's model server checks against the fake llama.cpp server taught each
 * usual mistake: nothing listening, no --jinja (tools refused, or calls as text),
 * tools dropped, a thinking switch the server does not understand, thinking with a
 * tiny budget, too small a context, a MODEL the server does not serve, no streaming.
 */
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load-config.js";
import { checkModelServer } from "../../src/doctor/model-checks.js";
import type { SetupFinding } from "../../src/contracts/setup-finding.js";
import { refusedBaseUrl, startFakeOpenAI, type FakeOpenAI, type FakeOpenAIOptions } from "../fakes/openai-server.js";
import { qwen3LikeModel, type ThinkingSwitch } from "../fakes/openai-model-behaviour.js";
import { startFakeOllama, type FakeOllama, type OllamaPlan, type OllamaRequest } from "../fakes/ollama-server.js";

let fake: FakeOpenAI | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

async function doctorAgainst(
  server: FakeOpenAIOptions & { understands?: ThinkingSwitch },
  env: Record<string, string> = {},
): Promise<Map<string, SetupFinding>> {
  fake = await startFakeOpenAI({
    contextTokens: 16384,
    ...server,
    handler: qwen3LikeModel(server.understands ? { understands: server.understands } : {}),
  });
  return byCheck(await checkModelServer(loadConfig({ OPENAI_BASE_URL: fake.url, ...env })));
}

function byCheck(findings: SetupFinding[]): Map<string, SetupFinding> {
  for (const f of findings) expect(f.group).toBe("Model server");
  return new Map(findings.map((f) => [f.check, f]));
}

describe("doctor: model server", () => {
  it("passes every check on llama.cpp with --jinja, a big enough context and the default settings", async () => {
    const found = await doctorAgainst({});
    expect([...found.values()].map((f) => [f.check, f.status])).toEqual([
      ["answers", "pass"],
      ["api", "pass"],
      ["model", "pass"],
      ["streams", "pass"],
      ["tool calls", "pass"],
      ["thinking switch", "pass"],
      ["token budget", "pass"],
      ["context", "pass"],
    ]);
    expect(found.get("model")!.detail).toContain("qwen3-1.7b-q8_0.gguf");
    expect(found.get("tool calls")!.detail).toBe("returns structured tool calls (the probe tool was called)");
    // What the probes sent: a probe tool, thinking off the llama.cpp way, tiny budgets.
    const toolProbe = fake!.requests.find((r) => r.body.tools)!;
    expect(toolProbe.body.tools!.map((t) => t.function.name)).toEqual(["doctor_probe"]);
    expect(toolProbe.body.stream).toBe(true);
    expect(toolProbe.body.chat_template_kwargs).toEqual({ enable_thinking: false });
    expect(Math.max(...fake!.requests.map((r) => Number(r.body.max_tokens)))).toBeLessThanOrEqual(256);
  });

  it("nothing listening: one failure naming the URL and the command that starts a server; the request checks are skipped", async () => {
    const url = await refusedBaseUrl();
    const found = byCheck(await checkModelServer(loadConfig({ OPENAI_BASE_URL: url })));
    expect(found.get("answers")).toMatchObject({
      status: "fail",
      detail: `no model server answers at ${url} (ECONNREFUSED)`,
    });
    expect(found.get("answers")!.fix).toBe(
      "start one: llama-server -hf Qwen/Qwen3-1.7B-GGUF:Q8_0 --jinja (or set OPENAI_BASE_URL to your server)",
    );
    expect(found.get("requests")!.status).toBe("skip");
    expect([...found.values()].filter((f) => f.status === "fail").map((f) => f.check)).toEqual(["answers"]);
  });

  it("an OPENAI_BASE_URL that is not the API root (no /models there) says what it should be", async () => {
    fake = await startFakeOpenAI({});
    const found = byCheck(await checkModelServer(loadConfig({ OPENAI_BASE_URL: `${fake.origin}/api` })));
    expect(found.get("answers")).toMatchObject({
      status: "fail",
      detail: `${fake.origin}/api/models answered HTTP 404 (File Not Found)`,
      fix: "OPENAI_BASE_URL must be the server's OpenAI API root, usually ending in /v1",
    });
  });

  it("llama.cpp started without --jinja refuses tools: the failure quotes it and says to add --jinja", async () => {
    const found = await doctorAgainst({ toolCalls: "requires-jinja" });
    expect(found.get("streams")!.status).toBe("pass");
    expect(found.get("tool calls")).toMatchObject({
      status: "fail",
      detail: "the server refuses requests with tools (HTTP 500: tools param requires --jinja flag)",
    });
    expect(found.get("tool calls")!.fix).toMatch(/^start llama-server with --jinja/);
  });

  it("tool calls written as <tool_call> text instead of structured calls are caught", async () => {
    const found = await doctorAgainst({ toolCalls: "as-text" });
    expect(found.get("tool calls")).toMatchObject({
      status: "fail",
      detail: "tool calls come back as plain text in the answer (<tool_call>…), not as structured tool_calls",
    });
    expect(found.get("tool calls")!.fix).toContain("--jinja");
  });

  it("a thinking switch the server does not understand (wrong MODEL_SERVER) is caught", async () => {
    const found = await doctorAgainst({ understands: "reasoning_effort" }, { MODEL_SERVER: "vllm" });
    expect(found.get("thinking switch")).toMatchObject({
      status: "fail",
      detail: "reasoning came back with thinking switched off: the server ignores chat_template_kwargs.enable_thinking",
    });
    expect(found.get("thinking switch")!.fix).toMatch(/^set MODEL_SERVER to the server you really run/);
  });

  it("thinking on with a tiny MODEL_MAX_TOKENS (empty answers) is caught", async () => {
    const found = await doctorAgainst({}, { MODEL_MAX_TOKENS: "256" });
    expect(found.get("token budget")).toMatchObject({
      status: "fail",
      detail: "thinking is on and MODEL_MAX_TOKENS=256: the reasoning uses up the budget and answers come back empty",
      fix: "set MODEL_MAX_TOKENS=4096 (or ENABLE_THINKING=false)",
    });
    const off = await doctorAgainst({}, { MODEL_MAX_TOKENS: "256", ENABLE_THINKING: "false" });
    expect(off.get("token budget")!.status).toBe("pass");
  });

  it("a context too small for MODEL_MAX_TOKENS plus the history is caught, with the -c to use", async () => {
    const found = await doctorAgainst({ contextTokens: 4096 });
    expect(found.get("context")!.status).toBe("fail");
    expect(found.get("context")!.detail).toBe(
      'context of 4096 tokens is too small for MODEL_MAX_TOKENS 4096 + HISTORY_MAX_TOKENS 6000 + about 1500 for the prompt and tools = 11596: long conversations fail with "exceeds the available context size"',
    );
    expect(found.get("context")!.fix).toMatch(/^start llama-server with -c 12288 or more/);
  });

  it("a MODEL the server does not serve (not llama.cpp) names what it does serve", async () => {
    const found = await doctorAgainst({ modelId: "Qwen/Qwen3-1.7B" }, { MODEL_SERVER: "vllm" });
    expect(found.get("model")).toMatchObject({
      status: "fail",
      detail: "MODEL=qwen3-1.7b is not served (the server lists Qwen/Qwen3-1.7B)",
      fix: "set MODEL to one of: Qwen/Qwen3-1.7B",
    });
  });

  it("MODEL_CHOICES naming a model the server does not serve is caught; served ones pass", async () => {
    const models = ["qwen3-1.7b", "qwen3-4b"];
    const wrong = await doctorAgainst({ models }, { MODEL_SERVER: "vllm", MODEL_CHOICES: "qwen3-1.7b,qwen3-8b" });
    expect(wrong.get("model")!.status).toBe("pass");
    expect(wrong.get("model choices")).toMatchObject({
      status: "fail",
      detail: "MODEL_CHOICES names models the server does not serve: qwen3-8b (switching to one fails every answer)",
      fix: "load them into the server, or keep MODEL_CHOICES to what it lists: qwen3-1.7b, qwen3-4b",
    });
    await fake!.close();
    const right = await doctorAgainst({ models }, { MODEL_SERVER: "vllm", MODEL_CHOICES: "qwen3-4b,qwen3-1.7b" });
    expect(right.get("model choices")!.status).toBe("pass");
    // Without MODEL_CHOICES (the server's list is the choice) there is nothing to check.
    await fake!.close();
    expect((await doctorAgainst({ models }, { MODEL_SERVER: "vllm" })).has("model choices")).toBe(false);
  });

  it("a server (or proxy) that answers a streamed request with one JSON body fails the stream check", async () => {
    fake = await startFakeOpenAI({ contextTokens: 16384 });
    fake.setHandler(() => ({
      kind: "raw",
      status: 200,
      headers: [["Content-Type", "application/json"]],
      body: JSON.stringify({ choices: [{ message: { content: "OK" } }] }),
    }));
    const found = byCheck(await checkModelServer(loadConfig({ OPENAI_BASE_URL: fake.url })));
    expect(found.get("streams")).toMatchObject({
      status: "fail",
      detail: "a streamed request got no server-sent events (Content-Type application/json)",
    });
    expect(found.get("streams")!.fix).toContain("text/event-stream");
  });
});

describe("Ollama's native API (issue 30)", () => {
  let ollama: FakeOllama | undefined;
  afterEach(async () => {
    await ollama?.close();
    ollama = undefined;
  });

  /** A Qwen3 on Ollama: calls the probe tool when it has tools, else says OK (thinking only when asked to). */
  const qwen3OnOllama = (request: OllamaRequest): OllamaPlan =>
    request.body.tools
      ? { toolCalls: [{ name: "doctor_probe", arguments: { word: "ping" } }] }
      : { thinking: "The user wants OK.", content: "OK" };

  async function doctorAgainstOllama(
    fake: Parameters<typeof startFakeOllama>[0],
    env: Record<string, string> = {},
  ): Promise<Map<string, SetupFinding>> {
    ollama = await startFakeOllama(fake);
    return byCheck(
      await checkModelServer(
        loadConfig({ OPENAI_BASE_URL: ollama.url, MODEL_SERVER: "ollama", MODEL: "qwen3:1.7b", ...env }),
      ),
    );
  }

  it("probes go to /api/chat with the bot's num_ctx (the Modelfile's, from /api/show); every check passes", async () => {
    const found = await doctorAgainstOllama({ answer: qwen3OnOllama, numCtx: 16384 });
    expect([...found.values()].map((f) => [f.check, f.status])).toEqual([
      ["answers", "pass"],
      ["api", "pass"],
      ["model", "pass"],
      ["streams", "pass"],
      ["tool calls", "pass"],
      ["thinking switch", "pass"],
      ["token budget", "pass"],
      ["context", "pass"],
    ]);
    expect(found.get("api")!.detail).toBe(
      `Ollama 0.12.6's native API (${ollama!.origin}/api/chat), every request with num_ctx 16384 and keep_alive 30m`,
    );
    expect(found.get("thinking switch")!.detail).toBe("thinking switches off (think: false on /api/chat)");
    expect(found.get("context")!.detail).toMatch(/^num_ctx 16384 \(\/api\/show: num_ctx in the Modelfile\) holds/);
    // The probes were the bot's own requests: native, num_ctx and keep_alive on each, thinking off, nothing via /v1.
    expect(ollama!.requests.length).toBe(3);
    for (const request of ollama!.requests)
      expect(request.body).toMatchObject({
        stream: true,
        think: false,
        keep_alive: "30m",
        options: { num_ctx: 16384 },
      });
    expect(ollama!.requests[1]?.body.tools.map((t: any) => t.function.name)).toEqual(["doctor_probe"]);
    expect(ollama!.openAiRequests).toEqual([]);
  });

  it("a model without a Modelfile num_ctx gets its trained length capped at 8192: a warning (less history), the fix is MODEL_CONTEXT_TOKENS", async () => {
    const found = await doctorAgainstOllama({ answer: qwen3OnOllama });
    expect(found.get("context")).toMatchObject({
      status: "warn",
      detail:
        "num_ctx 8192 (/api/show: trained context_length 40960, capped at 8192) is smaller than MODEL_MAX_TOKENS 4096 + HISTORY_MAX_TOKENS 6000 + about 1500 for the prompt and tools = 11596: the bot keeps less history to fit",
    });
    expect(found.get("context")!.fix).toMatch(/^set MODEL_CONTEXT_TOKENS=12288 /);
    await ollama!.close();
    const set = await doctorAgainstOllama({ answer: qwen3OnOllama }, { MODEL_CONTEXT_TOKENS: "12288" });
    expect(set.get("context")!.detail).toMatch(/^num_ctx 12288 \(MODEL_CONTEXT_TOKENS\) holds/);
    expect(ollama!.requests.every((r) => r.body.options.num_ctx === 12288)).toBe(true);
  });

  it("a model that is not pulled: Ollama's own words, and what it has", async () => {
    const found = await doctorAgainstOllama({ answer: qwen3OnOllama }, { MODEL: "llama9" });
    expect(found.get("model")).toMatchObject({
      status: "fail",
      detail: "MODEL=llama9 is not served (the server lists qwen3:1.7b)",
    });
    expect(found.get("streams")).toMatchObject({
      status: "fail",
      detail: 'a streamed request answered HTTP 404: model "llama9" not found, try pulling it first',
    });
    // `qwen3` is Ollama's `qwen3:latest`.
    await ollama!.close();
    const latest = await doctorAgainstOllama({ answer: qwen3OnOllama, models: ["qwen3:latest"] }, { MODEL: "qwen3" });
    expect(latest.get("model")!.status).toBe("pass");
  });

  it("a model that answers in text instead of calling the probe tool: the fix is a model with tool support", async () => {
    const found = await doctorAgainstOllama({ answer: () => ({ content: "I would call doctor_probe now." }) });
    expect(found.get("tool calls")).toMatchObject({
      status: "fail",
      detail: "the model answered without calling the probe tool: the server ignored the tools it was sent",
    });
    expect(found.get("tool calls")!.fix).toMatch(/^use a model with tool support/);
  });
});

describe("which API the bot talks to (issue 30)", () => {
  it("says Ollama's native API with MODEL_SERVER=ollama, and fails an Ollama server reached through /v1", async () => {
    const { checkModelApi } = await import("../../src/doctor/model-checks.js");
    const ollama = await startFakeOllama({ answer: () => ({ content: "hi" }) });
    try {
      const through = (server: string) =>
        checkModelApi(
          loadConfig({ OPENAI_BASE_URL: ollama.url, MODEL_SERVER: server, REDIS_URL: "redis://127.0.0.1:6379" }),
        );
      expect(await through("ollama")).toMatchObject({
        check: "api",
        status: "pass",
        detail: expect.stringContaining("/api/chat"),
      });
      expect(await through("llama.cpp")).toMatchObject({
        check: "api",
        status: "fail",
        detail:
          "an Ollama server reached through its OpenAI-compatible /v1, which ignores num_ctx and cuts long prompts (tool definitions first)",
        fix: expect.stringContaining("MODEL_SERVER=ollama"),
      });
    } finally {
      await ollama.close();
    }
    // MODEL_SERVER=ollama in front of a server that is not Ollama (no /api/version, no /api/tags).
    const notOllama = await startFakeOpenAI();
    try {
      expect(
        await checkModelApi(
          loadConfig({ OPENAI_BASE_URL: notOllama.url, MODEL_SERVER: "ollama", REDIS_URL: "redis://127.0.0.1:6379" }),
        ),
      ).toMatchObject({ status: "fail", fix: expect.stringContaining("MODEL_SERVER to the server you really run") });
    } finally {
      await notOllama.close();
    }
    // A llama.cpp server (no /api/version) passes as the OpenAI-compatible API.
    const llama = await startFakeOpenAI();
    try {
      expect(
        await checkModelApi(loadConfig({ OPENAI_BASE_URL: llama.url, REDIS_URL: "redis://127.0.0.1:6379" })),
      ).toMatchObject({
        status: "pass",
        detail: expect.stringContaining("OpenAI-compatible"),
      });
    } finally {
      await llama.close();
    }
  });
});
