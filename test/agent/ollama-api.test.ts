/**
 * MODEL_SERVER=ollama: the loop talks to Ollama's native `/api/chat` (NDJSON) through the same SDK
 * client, against a fake that follows Ollama's API docs. Every request carries `options.num_ctx`
 * (the context the bot budgets for) and `keep_alive`; nothing goes to `/v1`.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createModelClient } from "../../src/agent/model-client.js";
import { ModelError } from "../../src/agent/model-error.js";
import { loadConfig } from "../../src/config/load-config.js";
import type { AgentDeps } from "../../src/agent/run-agent.js";
import { startFakeOllama, type FakeOllama, type OllamaPlan } from "../fakes/ollama-server.js";
import { agentDeps, collect, finishOf, streamedReasoning, streamedText, user } from "./agent-harness.js";
import { newsTool, readUrlTool, weatherTool, type Execution } from "./test-tools.js";

let fake: FakeOllama | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

const PAGE = "https://news.example/story-1";

function ollamaDeps(url: string, log: Execution[], overrides: Partial<AgentDeps> = {}): AgentDeps {
  return agentDeps(
    url,
    [
      weatherTool(log, { Beijing: 21, Shanghai: 25 }, 5),
      newsTool(log, [{ title: "Rain", link: PAGE }]),
      readUrlTool(log, { [PAGE]: "It rained all day." }),
    ],
    {
      client: createModelClient({
        baseURL: url,
        apiKey: "ollama",
        timeoutMs: 5_000,
        server: "ollama",
        contextTokens: 6144,
      }),
      model: "qwen3:1.7b",
      modelServer: "ollama",
      ...overrides,
    },
  );
}

/** Answers in turn: one plan per request. */
function scripted(plans: OllamaPlan[]): () => OllamaPlan {
  let i = 0;
  return () => plans[i++] ?? { content: "no more plans" };
}

describe("Ollama's native API", () => {
  it("parallel weather for Beijing and Shanghai: both calls run, results go back by tool name, num_ctx on every request", async () => {
    fake = await startFakeOllama({
      answer: scripted([
        {
          toolCalls: [
            { name: "get_weather", arguments: { city: "Beijing" } },
            { name: "get_weather", arguments: { city: "Shanghai" } },
          ],
        },
        { content: "Beijing 21°C, Shanghai 25°C." },
      ]),
    });
    const log: Execution[] = [];
    const events = await collect(ollamaDeps(fake.url, log, { enableThinking: false }), [
      user("北京和上海的天气怎么样？"),
    ]);
    expect(streamedText(events)).toBe("Beijing 21°C, Shanghai 25°C.");
    expect(finishOf(events).reason).toBe("stop");
    expect(log.map((e) => e.args)).toEqual(expect.arrayContaining([{ city: "Beijing" }, { city: "Shanghai" }]));
    expect(fake.requests).toHaveLength(2);
    for (const request of fake.requests) {
      expect(request.body.options).toMatchObject({ num_ctx: 6144, num_predict: 4096 });
      expect(request.body.keep_alive).toBe("30m");
      expect(request.body.think).toBe(false);
      // OPENAI_API_KEY goes along (an Ollama behind a reverse proxy may check it).
      expect(request.authorization).toBe("Bearer ollama");
      expect(request.body.tools.map((t: any) => t.function.name)).toEqual(["get_weather", "get_news", "read_url"]);
    }
    const second = fake.requests[1]?.body.messages as Array<Record<string, any>>;
    expect(second.at(-3)).toMatchObject({
      role: "assistant",
      tool_calls: [
        { function: { name: "get_weather", arguments: { city: "Beijing" } } },
        { function: { name: "get_weather", arguments: { city: "Shanghai" } } },
      ],
    });
    expect(second.slice(-2).map((m) => [m.role, m.tool_name])).toEqual([
      ["tool", "get_weather"],
      ["tool", "get_weather"],
    ]);
    expect(second.at(-2)?.content).toContain("21");
    expect(fake.openAiRequests).toEqual([]);
  });

  it("news then read_url, thinking on: the reasoning streams as reasoning, the story is read", async () => {
    fake = await startFakeOllama({
      answer: scripted([
        { thinking: "The user wants news.", toolCalls: [{ name: "get_news", arguments: { topic: "weather" } }] },
        { thinking: "Read the story.", toolCalls: [{ name: "read_url", arguments: { url: PAGE } }] },
        { thinking: "Summarise it.", content: "It rained all day." },
      ]),
    });
    const log: Execution[] = [];
    const events = await collect(ollamaDeps(fake.url, log), [user("What is the news? Give me the story.")]);
    expect(log.map((e) => e.name)).toEqual(["get_news", "read_url"]);
    expect(streamedText(events)).toBe("It rained all day.");
    expect(streamedReasoning(events)).toContain("Summarise it.");
    expect(fake.requests.every((r) => r.body.think === true)).toBe(true);
  });

  it("a photo goes as base64 in `images` beside the text", async () => {
    fake = await startFakeOllama({ answer: () => ({ content: "A cat." }), capabilities: ["completion", "vision"] });
    const events = await collect(ollamaDeps(fake.url, [], { enableThinking: false, tools: [] }), [
      {
        role: "user",
        content: "What is this? [image: cat.jpg]",
        images: [{ name: "cat.jpg", mediaType: "image/jpeg", base64: "QUJD" }],
      },
    ]);
    expect(streamedText(events)).toBe("A cat.");
    expect(fake.requests[0]?.body.messages.at(-1)).toEqual({
      role: "user",
      content: "What is this? [image: cat.jpg]",
      images: ["QUJD"],
    });
    expect(fake.requests[0]?.body.tools).toBeUndefined();
  });

  it("/stop mid-answer ends the round as aborted and closes the request", async () => {
    fake = await startFakeOllama({ answer: () => ({ content: "one two three four five six seven eight", gapMs: 40 }) });
    const stop = new AbortController();
    const events: string[] = [];
    const deps = ollamaDeps(fake.url, [], { enableThinking: false });
    const { runAgent } = await import("../../src/agent/run-agent.js");
    for await (const event of runAgent(deps, { messages: [user("count")], signal: stop.signal })) {
      events.push(event.type);
      if (event.type === "text-delta") stop.abort();
    }
    expect(events.at(-1)).toBe("finish");
    expect(await fake.requests[0]?.outcome).toBe("client-closed");
  });

  it("a summary (stream: false) comes back as one completion, with num_ctx", async () => {
    fake = await startFakeOllama({ answer: () => ({ content: "Ada likes tea." }) });
    const { createSummarizer } = await import("../../src/agent/conversation-summarizer.js");
    const summarize = createSummarizer({
      client: createModelClient({
        baseURL: fake.url,
        apiKey: "ollama",
        timeoutMs: 5_000,
        server: "ollama",
        contextTokens: 6144,
      }),
      model: "qwen3:1.7b",
      modelServer: "ollama",
    });
    const text = await summarize({
      messages: [user("I like tea."), { role: "assistant", content: "Noted." }],
      shared: false,
    });
    expect(text).toBe("Ada likes tea.");
    expect(fake.requests[0]?.body).toMatchObject({ stream: false, think: false, options: { num_ctx: 6144 } });
  });

  it("Ollama's errors arrive as model errors with its words (unknown model)", async () => {
    fake = await startFakeOllama({ answer: () => ({ content: "x" }) });
    const unknown = collect(ollamaDeps(fake.url, [], { model: "llama9" }), [user("hi")]);
    await expect(unknown).rejects.toBeInstanceOf(ModelError);
    await expect(unknown).rejects.toThrow(/model "llama9" not found, try pulling it first/);
  });

  it("done_reason length ends the answer as cut for length; an error line mid-stream is a model error", async () => {
    fake = await startFakeOllama({
      answer: scripted([
        { content: "The story goes on and", doneReason: "length" },
        { content: "Half an", streamError: "an error was encountered while running the model: CUDA error" },
      ]),
    });
    const deps = ollamaDeps(fake.url, [], { enableThinking: false });
    const cut = await collect(deps, [user("tell me a story")]);
    expect(streamedText(cut)).toBe("The story goes on and");
    expect(finishOf(cut).reason).toBe("length");
    const failed = collect(deps, [user("again")]);
    await expect(failed).rejects.toBeInstanceOf(ModelError);
    await expect(failed).rejects.toThrow(/CUDA error/);
  });

  it("thinking on with a model that cannot think: answered without thinking, and not asked to think again", async () => {
    fake = await startFakeOllama({ answer: () => ({ content: "Hello." }), capabilities: ["completion", "tools"] });
    const deps = ollamaDeps(fake.url, []);
    expect(streamedText(await collect(deps, [user("hi")]))).toBe("Hello.");
    expect(streamedText(await collect(deps, [user("hi again")]))).toBe("Hello.");
    // The refused `think: true` is not recorded (Ollama answered 400 before any chat); the retry and the next turn go without it.
    expect(fake.requests.map((r) => r.body.think)).toEqual([undefined, undefined]);
    expect(fake.requests.every((r) => r.body.options.num_ctx === 6144)).toBe(true);
  });

  it("MODEL_KEEP_ALIVE reaches every request in Ollama's syntax: whole seconds as a number (-1 keeps the model), durations as text", async () => {
    fake = await startFakeOllama({ answer: () => ({ content: "Hello." }) });
    const sent: unknown[] = [];
    for (const value of ["-1", "0", "1h30m", "45s"]) {
      const { MODEL_KEEP_ALIVE } = loadConfig({ MODEL_KEEP_ALIVE: value });
      const client = createModelClient({
        baseURL: fake.url,
        apiKey: "ollama",
        timeoutMs: 5_000,
        server: "ollama",
        contextTokens: 6144,
        keepAlive: MODEL_KEEP_ALIVE,
      });
      const deps = ollamaDeps(fake.url, [], { client, enableThinking: false });
      expect(streamedText(await collect(deps, [user("hi")]))).toBe("Hello.");
      sent.push(fake.requests.at(-1)?.body.keep_alive);
    }
    // Ollama reads a string with Go's time.ParseDuration, which refuses "-1": it must go as the number.
    expect(sent).toEqual([-1, 0, "1h30m", "45s"]);
    expect(() => loadConfig({ MODEL_KEEP_ALIVE: "forever" })).toThrow(/MODEL_KEEP_ALIVE.*expected a duration/s);
    expect(loadConfig({}).MODEL_KEEP_ALIVE).toBe("30m");
  });
});
