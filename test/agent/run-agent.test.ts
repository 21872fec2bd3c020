/**
 * The loop end to end: the real openai SDK over HTTP against the fake
 * llama.cpp-compatible server, with real tools.
 */
import { describe, expect, vi } from "vitest";
import { runAgent } from "../../src/agent/run-agent.js";
import {
  cutByLength,
  stallAfter,
  textAnswer,
  textualToolCallAnswer,
  toolCallAnswer,
  withFinish,
} from "../fakes/openai-server.js";
import { agentDeps, collect, finishOf, streamedReasoning, streamedText, user } from "./agent-harness.js";
import { hangingTool, newsTool, readUrlTool, throwingTool, weatherTool, type Execution } from "./test-tools.js";
import { e2eTest } from "../support/fixtures.js";

describe("reference scenarios", () => {
  e2eTest(
    "北京和上海今天哪里更热: two parallel get_weather calls overlap in time, then an answer",
    async ({ model: fake }) => {
      const log: Execution[] = [];
      fake.script([
        toolCallAnswer(
          [
            { name: "get_weather", arguments: { city: "北京" }, id: "callBeijing" },
            { name: "get_weather", arguments: { city: "上海" }, id: "callShanghai" },
          ],
          { reasoning: "用户想比较两地气温。\n", interleave: true },
        ),
        textAnswer("今天北京更热：北京 35°C，上海 30°C。"),
      ]);
      const deps = agentDeps(fake.url, [weatherTool(log, { 北京: 35, 上海: 30 }, 80)]);
      const events = await collect(deps, [user("北京和上海今天哪里更热？")]);

      // Both executions overlap: each started before the other ended.
      expect(log.map((e) => (e.args as { city: string }).city).sort()).toEqual(["上海", "北京"]);
      const [a, b] = log as [Execution, Execution];
      expect(a.start).toBeLessThan(b.end ?? Infinity);
      expect(b.start).toBeLessThan(a.end ?? Infinity);

      // What the model saw in round 2: the assistant message verbatim, then results paired by id.
      const round2 = fake.requests[1]?.body.messages ?? [];
      expect(round2.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool", "tool"]);
      expect(round2[2]).toEqual({
        role: "assistant",
        content: "",
        tool_calls: [
          { id: "callBeijing", type: "function", function: { name: "get_weather", arguments: '{"city": "北京"}' } },
          { id: "callShanghai", type: "function", function: { name: "get_weather", arguments: '{"city": "上海"}' } },
        ],
      });
      const byId = Object.fromEntries(round2.slice(3).map((m) => [m.tool_call_id, JSON.parse(m.content)]));
      expect(byId.callBeijing).toMatchObject({ city: "北京", temperature_c: 35 });
      expect(byId.callShanghai).toMatchObject({ city: "上海", temperature_c: 30 });

      const finish = finishOf(events);
      expect(finish.reason).toBe("stop");
      expect(finish.text).toBe("今天北京更热：北京 35°C，上海 30°C。");
      expect(finish.rounds).toBe(2);
      expect(finish.messages.map((m) => m.role)).toEqual(["assistant", "tool", "tool", "assistant"]);
      expect(finish.messages.at(-1)).toEqual({ role: "assistant", content: "今天北京更热：北京 35°C，上海 30°C。" });
      // Reasoning was streamed but is never stored.
      expect(streamedReasoning(events)).toBe("用户想比较两地气温。\n");
      expect(JSON.stringify(finish.messages)).not.toContain("比较两地");
      expect(events.filter((e) => e.type === "tool-call").map((e) => e.type === "tool-call" && e.id)).toEqual([
        "callBeijing",
        "callShanghai",
      ]);
      expect(events.filter((e) => e.type === "tool-result").every((e) => e.type === "tool-result" && e.ok)).toBe(true);
      expect(finish.usage?.completionTokens).toBeGreaterThan(0);
    },
  );

  e2eTest(
    "今天 AI 新闻里第一条的正文: get_news, then read_url with the link the model read from the first result",
    async ({ model: fake }) => {
      const log: Execution[] = [];
      fake.script([
        toolCallAnswer([{ name: "get_news", arguments: { topic: "AI" } }]),
        (request) => {
          // The fake model reads the observation it was sent, like a real one.
          const observation = request.body.messages?.at(-1)?.content as string;
          const first = (JSON.parse(observation) as { link: string }[])[0];
          return toolCallAnswer([{ name: "read_url", arguments: { url: first?.link } }]);
        },
        textAnswer("第一条新闻的正文：模型变得更小更快。"),
      ]);
      const deps = agentDeps(fake.url, [
        newsTool(log, [
          { title: "Small models get faster", link: "https://news.example/a1" },
          { title: "Other", link: "https://news.example/b2" },
        ]),
        readUrlTool(log, { "https://news.example/a1": "模型变得更小更快。" }),
      ]);
      const events = await collect(deps, [user("今天 AI 新闻里第一条的正文")]);
      expect(log.map((e) => [e.name, e.args])).toEqual([
        ["get_news", { topic: "AI" }],
        ["read_url", { url: "https://news.example/a1" }],
      ]);
      const finish = finishOf(events);
      expect(finish.reason).toBe("stop");
      expect(finish.rounds).toBe(3);
      expect(finish.messages.map((m) => m.role)).toEqual(["assistant", "tool", "assistant", "tool", "assistant"]);
      expect(fake.requests[2]?.body.messages?.at(-1)?.content).toContain("模型变得更小更快");
    },
  );
});

describe("a round with too many calls", () => {
  e2eTest(
    "runs at most maxParallelCalls of them; the rest come back as an observation, every call still paired",
    async ({ model: fake }) => {
      const log: Execution[] = [];
      const cities = Array.from({ length: 10 }, (_, i) => `City${i}`);
      fake.script([
        toolCallAnswer(cities.map((city, i) => ({ name: "get_weather", arguments: { city }, id: `c${i}` }))),
        textAnswer("Done."),
      ]);
      const temps = Object.fromEntries(cities.map((c) => [c, 20]));
      const events = await collect(agentDeps(fake.url, [weatherTool(log, temps, 10)], { maxParallelCalls: 8 }), [
        user("weather everywhere"),
      ]);
      expect(log.map((e) => (e.args as { city: string }).city)).toEqual(cities.slice(0, 8));
      const tools = (fake.requests[1]?.body.messages ?? []).filter((m) => m.role === "tool");
      expect(tools.map((m) => m.tool_call_id)).toEqual(cities.map((_, i) => `c${i}`));
      expect(tools.slice(8).map((m) => m.content)).toEqual([
        "Error: not run: at most 8 tool calls per round. Call get_weather again next round if it is still needed.",
        "Error: not run: at most 8 tool calls per round. Call get_weather again next round if it is still needed.",
      ]);
      expect(finishOf(events).text).toBe("Done.");
    },
  );
});

describe("the request each round sends", () => {
  e2eTest(
    "streams with usage, auto tool choice, parallel calls, tools from the zod schema, and a dated (not timed) system prompt",
    async ({ model: fake }) => {
      fake.script([textAnswer("Hi!")]);
      await collect(agentDeps(fake.url, [weatherTool([], {})]), [user("hello")]);
      const body = fake.requests[0]?.body;
      expect(body).toMatchObject({
        model: "qwen3-1.7b",
        stream: true,
        stream_options: { include_usage: true },
        tool_choice: "auto",
        parallel_tool_calls: true,
        max_tokens: 4096,
        temperature: 0.6,
        top_p: 0.95,
        chat_template_kwargs: { enable_thinking: true },
      });
      expect(body?.tools).toEqual([
        {
          type: "function",
          function: {
            name: "get_weather",
            description: "Current weather for a city",
            parameters: expect.objectContaining({ type: "object", required: ["city"] }),
          },
        },
      ]);
      const system = body?.messages?.[0];
      expect(system?.role).toBe("system");
      expect(system?.content).toContain("Tuesday 2025-06-03");
      expect(system?.content).not.toContain("14:05");
      expect(system?.content).toContain("get_news");
    },
  );

  e2eTest("sends history as given and leaves the speaker name out of the request", async ({ model: fake }) => {
    fake.script([textAnswer("Alice asked about the weather.")]);
    await collect(agentDeps(fake.url, []), [
      { role: "user", content: "Alice: what's the weather?", name: "Alice" },
      { role: "assistant", content: "Sunny." },
      { role: "user", content: "Bob: what did Alice ask?", name: "Bob" },
    ]);
    const messages = fake.requests[0]?.body.messages ?? [];
    expect(messages.slice(1)).toEqual([
      { role: "user", content: "Alice: what's the weather?" },
      { role: "assistant", content: "Sunny." },
      { role: "user", content: "Bob: what did Alice ask?" },
    ]);
    // No tools: no tool fields at all (OpenAI rejects parallel_tool_calls without tools).
    expect(fake.requests[0]?.body).not.toHaveProperty("tools");
    expect(fake.requests[0]?.body).not.toHaveProperty("parallel_tool_calls");
  });
});

describe("finish reasons and server quirks", () => {
  e2eTest("a plain answer streams text deltas and ends with stop", async ({ model: fake }) => {
    fake.script([textAnswer("Hello there! How can I help you today?", { reasoning: "Okay, the user said hi.\n" })]);
    const events = await collect(agentDeps(fake.url, []), [user("Hi")]);
    expect(streamedText(events)).toBe("Hello there! How can I help you today?");
    expect(events.filter((e) => e.type === "text-delta").length).toBeGreaterThan(5);
    expect(finishOf(events)).toMatchObject({
      reason: "stop",
      text: "Hello there! How can I help you today?",
      rounds: 1,
    });
  });

  e2eTest("a server that ends a tool round with stop still runs the tools", async ({ model: fake }) => {
    const log: Execution[] = [];
    fake.script([
      withFinish(toolCallAnswer([{ name: "get_weather", arguments: { city: "Paris" } }]), "stop"),
      textAnswer("18°C in Paris."),
    ]);
    const events = await collect(agentDeps(fake.url, [weatherTool(log, { Paris: 18 }, 1)]), [
      user("Weather in Paris?"),
    ]);
    expect(log).toHaveLength(1);
    expect(finishOf(events)).toMatchObject({ reason: "stop", text: "18°C in Paris.", rounds: 2 });
  });

  e2eTest("a server that sends no finish_reason: tool round and answer round both work", async ({ model: fake }) => {
    const log: Execution[] = [];
    fake.script([
      withFinish(toolCallAnswer([{ name: "get_weather", arguments: { city: "Paris" } }]), null),
      withFinish(textAnswer("18°C."), null),
    ]);
    const events = await collect(agentDeps(fake.url, [weatherTool(log, { Paris: 18 }, 1)]), [
      user("Weather in Paris?"),
    ]);
    expect(log).toHaveLength(1);
    expect(finishOf(events)).toMatchObject({ reason: "stop", text: "18°C." });
    expect(events.find((e) => e.type === "round-finish")).toMatchObject({ round: 1, reason: "tool_calls" });
  });

  e2eTest("length: the cut answer is reported as cut, with the text there is", async ({ model: fake }) => {
    fake.script([cutByLength(textAnswer("This answer is far too long to fit in the budget."), 4)]);
    const events = await collect(agentDeps(fake.url, []), [user("Tell me everything")]);
    const finish = finishOf(events);
    expect(finish.reason).toBe("length");
    expect(finish.text).toBe("This answer is far");
    expect(finish.messages).toEqual([{ role: "assistant", content: "This answer is far" }]);
  });

  e2eTest("length inside tool-call arguments: the cut call is never run", async ({ model: fake }) => {
    const log: Execution[] = [];
    fake.script([cutByLength(toolCallAnswer([{ name: "get_weather", arguments: { city: "Paris" } }]), 3)]);
    const events = await collect(agentDeps(fake.url, [weatherTool(log, { Paris: 18 })]), [user("Weather?")]);
    expect(log).toHaveLength(0);
    expect(events.some((e) => e.type === "tool-call")).toBe(false);
    expect(finishOf(events).reason).toBe("length");
  });

  e2eTest("textual <tool_call> blocks written into content are run, not shown", async ({ model: fake }) => {
    const log: Execution[] = [];
    fake.script([
      textualToolCallAnswer(
        [
          { name: "get_weather", arguments: { city: "Paris" } },
          { name: "get_weather", arguments: { city: "Rome" } },
        ],
        { reasoning: "Two cities.", splitTags: true },
      ),
      textAnswer("Rome is warmer."),
    ]);
    const events = await collect(agentDeps(fake.url, [weatherTool(log, { Paris: 18, Rome: 25 }, 1)]), [
      user("Paris or Rome?"),
    ]);
    expect(log.map((e) => e.args)).toEqual([{ city: "Paris" }, { city: "Rome" }]);
    expect(streamedText(events)).toBe("Rome is warmer.");
    expect(streamedText(events)).not.toContain("tool_call");
    expect(streamedReasoning(events)).toBe("Two cities.");
    const assistant = fake.requests[1]?.body.messages?.[2];
    expect(
      assistant?.tool_calls?.map((c: { function: { arguments: string } }) => JSON.parse(c.function.arguments)),
    ).toEqual([{ city: "Paris" }, { city: "Rome" }]);
    expect(new Set(assistant?.tool_calls?.map((c: { id: string }) => c.id)).size).toBe(2);
  });

  e2eTest("calls streamed without ids get generated ones, and results pair with them", async ({ model: fake }) => {
    const log: Execution[] = [];
    fake.script([
      toolCallAnswer(
        [
          { name: "get_weather", arguments: { city: "Paris" } },
          { name: "get_weather", arguments: { city: "Rome" } },
        ],
        { omitIds: true, interleave: true },
      ),
      textAnswer("done"),
    ]);
    await collect(agentDeps(fake.url, [weatherTool(log, { Paris: 18, Rome: 25 }, 1)]), [user("?")]);
    const messages = fake.requests[1]?.body.messages ?? [];
    const ids = messages[2]?.tool_calls?.map((c: { id: string }) => c.id) as string[];
    expect(ids).toHaveLength(2);
    expect(ids[0]).not.toBe(ids[1]);
    expect(ids.every((id) => id.length > 5)).toBe(true);
    expect(messages.slice(3).map((m) => m.tool_call_id)).toEqual(ids);
    expect(JSON.parse(messages[4]?.content)).toMatchObject({ city: "Rome", temperature_c: 25 });
  });
});

describe("tool failures come back to the model as observations", () => {
  e2eTest(
    "unknown tool, non-JSON arguments, a schema failure naming the field, a timeout and a thrown error",
    async ({ model: fake }) => {
      const log: Execution[] = [];
      fake.script([
        toolCallAnswer([
          { name: "get_stock_price", arguments: { symbol: "AAPL" }, id: "c1" },
          { name: "get_weather", arguments: '{"city": "Paris"', id: "c2" },
          { name: "get_weather", arguments: { town: "Paris" }, id: "c3" },
          { name: "hang", arguments: {}, id: "c4" },
          { name: "explode", arguments: {}, id: "c5" },
          { name: "get_weather", arguments: { city: "Atlantis" }, id: "c6" },
        ]),
        textAnswer("Sorry, the tools failed."),
      ]);
      const started = performance.now();
      const events = await collect(agentDeps(fake.url, [weatherTool(log, {}, 1), hangingTool(), throwingTool()]), [
        user("?"),
      ]);
      expect(performance.now() - started).toBeLessThan(2_000); // the hanging tool was cut at its 80 ms timeout
      const observations: Record<string, string> = Object.fromEntries(
        (fake.requests[1]?.body.messages ?? [])
          .filter((m) => m.role === "tool")
          .map((m) => [String(m.tool_call_id), String(m.content)]),
      );
      expect(observations.c1).toMatch(/unknown tool "get_stock_price".*Available tools: get_weather, hang, explode/);
      expect(observations.c2).toMatch(/arguments for get_weather are not valid JSON/);
      expect(observations.c2).toContain("city (string, required)");
      expect(observations.c3).toMatch(/invalid arguments for get_weather: "city" is required \(expected string\)/);
      expect(observations.c4).toMatch(/hang timed out after 80 ms/);
      expect(observations.c5).toMatch(/explode failed: backend returned HTTP 502/);
      expect(observations.c6).toMatch(/get_weather failed: no weather station for Atlantis/);
      for (const text of Object.values(observations)) expect(text.startsWith("Error: ")).toBe(true);
      const results = events.filter((e) => e.type === "tool-result");
      expect(results).toHaveLength(6);
      expect(results.every((e) => e.type === "tool-result" && !e.ok)).toBe(true);
      expect(finishOf(events).reason).toBe("stop");
    },
  );

  e2eTest("a schema failure that is not a missing field says what is wrong with the value", async ({ model: fake }) => {
    fake.script([toolCallAnswer([{ name: "get_weather", arguments: { city: 42 }, id: "c1" }]), textAnswer("ok")]);
    await collect(agentDeps(fake.url, [weatherTool([], {}, 1)]), [user("?")]);
    const observation = fake.requests[1]?.body.messages?.at(-1)?.content as string;
    expect(observation).toMatch(/"city": .*expected string, received number/);
  });
});

describe("the MAX_TOOL_ROUNDS fuse", () => {
  e2eTest(
    "stops after the last allowed tool round with a clear message in the user's language",
    async ({ model: fake }) => {
      const log: Execution[] = [];
      fake.setHandler(() => toolCallAnswer([{ name: "get_weather", arguments: { city: "Paris" } }]));
      const deps = agentDeps(fake.url, [weatherTool(log, { Paris: 18 }, 1)], { maxToolRounds: 2 });
      const events = await collect(deps, [user("巴黎天气怎么样？")]);
      const finish = finishOf(events);
      expect(finish.reason).toBe("max-rounds");
      expect(finish.text).toContain("2 轮");
      expect(log).toHaveLength(2); // two tool rounds ran; the third request's calls did not
      expect(fake.requests).toHaveLength(3);
      // Valid history: every tool_calls message has its results; the unrun calls are not stored.
      expect(finish.messages.map((m) => m.role)).toEqual(["assistant", "tool", "assistant", "tool", "assistant"]);
      expect(finish.messages.at(-1)).toEqual({ role: "assistant", content: finish.text });

      fake.setHandler(() => toolCallAnswer([{ name: "get_weather", arguments: { city: "Paris" } }]));
      const english = finishOf(await collect({ ...deps, maxToolRounds: 1 }, [user("Weather in Paris?")]));
      expect(english.text).toMatch(/^Sorry, I used tools for 1 rounds/);
    },
  );
});

describe("abort", () => {
  e2eTest(
    "mid-stream: the request is aborted, the loop finishes as aborted with the text so far",
    async ({ model: fake }) => {
      fake.script([stallAfter(textAnswer("Partial answer that never finishes"), 2, 10_000)]);
      const controller = new AbortController();
      const events: string[] = [];
      let finish: unknown;
      for await (const event of runAgent(agentDeps(fake.url, []), {
        messages: [user("?")],
        signal: controller.signal,
      })) {
        events.push(event.type);
        if (event.type === "text-delta" && events.filter((t) => t === "text-delta").length === 2) controller.abort();
        if (event.type === "finish") finish = event;
      }
      expect(finish).toMatchObject({
        reason: "aborted",
        text: "Partial answer",
        messages: [{ role: "assistant", content: "Partial answer" }],
      });
      expect(await fake.requests[0]?.outcome).toBe("client-closed");
    },
  );

  e2eTest("mid-tool: running tools get the abort and the half round is not stored", async ({ model: fake }) => {
    const log: Execution[] = [];
    fake.script([toolCallAnswer([{ name: "get_weather", arguments: { city: "Paris" } }])]);
    const controller = new AbortController();
    const started = performance.now();
    const run = collect(agentDeps(fake.url, [weatherTool(log, { Paris: 18 }, 5_000)]), [user("?")], controller.signal);
    await waitFor(() => log.length === 1);
    controller.abort();
    const events = await run;
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(log[0]?.aborted).toBe(true);
    expect(finishOf(events)).toMatchObject({ reason: "aborted", messages: [] });
    expect(events.find((e) => e.type === "tool-result")).toMatchObject({
      ok: false,
      output: expect.stringContaining("cancelled"),
    });
    expect(fake.requests).toHaveLength(1);
  });

  e2eTest("a consumer that stops listening mid-round aborts the tools still running", async ({ model: fake }) => {
    const fast: Execution[] = [];
    const slow: Execution[] = [];
    fake.script([
      toolCallAnswer([
        { name: "get_weather", arguments: { city: "Paris" } },
        { name: "slow_weather", arguments: { city: "Rome" } },
      ]),
    ]);
    const slowTool = { ...weatherTool(slow, { Rome: 25 }, 5_000), name: "slow_weather" };
    for await (const event of runAgent(agentDeps(fake.url, [weatherTool(fast, { Paris: 18 }, 1), slowTool]), {
      messages: [user("?")],
    })) {
      if (event.type === "tool-result") break;
    }
    await waitFor(() => slow[0]?.aborted === true);
    expect(fast[0]?.end).toBeDefined();
  });

  e2eTest("already aborted: no request is made", async ({ model: fake }) => {
    const controller = new AbortController();
    controller.abort();
    const events = await collect(agentDeps(fake.url, []), [user("?")], controller.signal);
    expect(finishOf(events).reason).toBe("aborted");
    expect(fake.requests).toHaveLength(0);
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 2_000): Promise<void> {
  await vi.waitFor(
    () => {
      if (!condition()) throw new Error("condition not met in time");
    },
    { timeout: timeoutMs, interval: 5 },
  );
}
