/** ENABLE_THINKING reaches each MODEL_SERVER in the form it understands (asserted on the request bodies). */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ModelServer } from "../../src/agent/model-dialect.js";
import { startFakeOpenAI, textAnswer, type FakeOpenAI } from "../fakes/openai-server.js";
import { agentDeps, collect, user } from "./agent-harness.js";

let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI(() => textAnswer("ok"));
});
afterAll(async () => {
  await fake.close();
});

async function bodyFor(
  modelServer: ModelServer,
  enableThinking: boolean,
  extra: { temperature?: number; topP?: number } = {},
) {
  const before = fake.requests.length;
  await collect(agentDeps(fake.url, [], { modelServer, enableThinking, ...extra }), [user("hi")]);
  const body = fake.requests[before]?.body;
  if (!body) throw new Error("no request recorded");
  return body;
}

describe("thinking switch per server", () => {
  it.each([
    ["llama.cpp", true],
    ["llama.cpp", false],
    ["vllm", true],
    ["vllm", false],
  ] as const)("%s (thinking %s): chat_template_kwargs.enable_thinking", async (server, on) => {
    const body = await bodyFor(server, on);
    expect(body.chat_template_kwargs).toEqual({ enable_thinking: on });
    expect(body).not.toHaveProperty("enable_thinking");
    expect(body).not.toHaveProperty("reasoning_effort");
    expect(body).toMatchObject({ max_tokens: 4096, top_k: 20, min_p: 0 });
  });

  it.each([true, false])("dashscope (thinking %s): top-level enable_thinking", async (on) => {
    const body = await bodyFor("dashscope", on);
    expect(body.enable_thinking).toBe(on);
    expect(body).not.toHaveProperty("chat_template_kwargs");
  });

  it("ollama: reasoning_effort none turns thinking off; nothing is sent to leave it on", async () => {
    expect((await bodyFor("ollama", false)).reasoning_effort).toBe("none");
    const on = await bodyFor("ollama", true);
    expect(on).not.toHaveProperty("reasoning_effort");
    expect(on).not.toHaveProperty("chat_template_kwargs");
  });

  it.each(["lmstudio", "openai"] as const)("%s: no thinking field at all", async (server) => {
    for (const on of [true, false]) {
      const body = await bodyFor(server, on);
      for (const key of ["chat_template_kwargs", "enable_thinking", "reasoning_effort", "top_k", "min_p"])
        expect(body).not.toHaveProperty(key);
    }
  });

  it("openai: the token cap is max_completion_tokens (max_tokens is deprecated there)", async () => {
    const body = await bodyFor("openai", false);
    expect(body.max_completion_tokens).toBe(4096);
    expect(body).not.toHaveProperty("max_tokens");
  });
});

describe("sampling defaults follow Qwen3's guidance", () => {
  it("thinking 0.6/0.95, non-thinking 0.7/0.8, and overrides win", async () => {
    expect(await bodyFor("llama.cpp", true)).toMatchObject({ temperature: 0.6, top_p: 0.95 });
    expect(await bodyFor("llama.cpp", false)).toMatchObject({ temperature: 0.7, top_p: 0.8 });
    expect(await bodyFor("vllm", true, { temperature: 0.2, topP: 0.5 })).toMatchObject({
      temperature: 0.2,
      top_p: 0.5,
    });
  });
});
