/** Model-server faults leave the loop as a typed ModelError the queue can act on. */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createModelClient } from "../../src/agent/model-client.js";
import { ModelError } from "../../src/agent/model-error.js";
import {
  contextExceeded,
  destroyConnection,
  dropAfter,
  errorEventAfter,
  httpError,
  rateLimited,
  refusedBaseUrl,
  serverError,
  stallAfter,
  startFakeOpenAI,
  textAnswer,
  toolCallAnswer,
  unavailable,
  type FakeOpenAI,
  type ResponsePlan,
} from "../fakes/openai-server.js";
import { agentDeps, streamedText, user } from "./agent-harness.js";
import { runAgent, type AgentDeps } from "../../src/agent/run-agent.js";
import type { AgentEvent } from "../../src/contracts/agent-events.js";
import { weatherTool } from "./test-tools.js";

let fake: FakeOpenAI;
beforeEach(async () => {
  fake = await startFakeOpenAI();
});
afterEach(async () => {
  await fake.close();
});

/** Runs the loop, keeping the events seen before the error. */
async function failure(deps: AgentDeps): Promise<{ error: ModelError; events: AgentEvent[] }> {
  const events: AgentEvent[] = [];
  try {
    for await (const event of runAgent(deps, { messages: [user("Hi")] })) events.push(event);
  } catch (error) {
    if (error instanceof ModelError) return { error, events };
    throw error;
  }
  throw new Error(`expected a ModelError, the loop finished: ${JSON.stringify(events.at(-1))}`);
}

async function failWith(plan: ResponsePlan): Promise<ModelError> {
  fake.script([plan]);
  return (await failure(agentDeps(fake.url, []))).error;
}

describe("ModelError", () => {
  it("HTTP 500 is a retryable server error", async () => {
    const error = await failWith(serverError());
    expect(error).toMatchObject({ code: "server-error", retryable: true, status: 500 });
  });

  it("HTTP 503 while the model loads is retryable", async () => {
    const error = await failWith(unavailable());
    expect(error).toMatchObject({ code: "server-error", retryable: true, status: 503 });
    expect(error.message).toContain("Loading model");
  });

  it("context exceeded (HTTP 400 even for a stream) is not retryable and has its own code", async () => {
    const error = await failWith(contextExceeded());
    expect(error).toMatchObject({ code: "context-exceeded", retryable: false, status: 400 });
  });

  it("vLLM's wording of context exceeded is recognised too", async () => {
    const error = await failWith(
      httpError(
        400,
        "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens.",
        "BadRequestError",
      ),
    );
    expect(error).toMatchObject({ code: "context-exceeded", retryable: false });
  });

  it("429 is retryable and carries the server's Retry-After", async () => {
    const error = await failWith(rateLimited(3));
    expect(error).toMatchObject({ code: "rate-limited", retryable: true, status: 429, retryAfterMs: 3000 });
  });

  it("a wrong key (401) is not retryable", async () => {
    const error = await failWith(httpError(401, "Invalid API Key", "authentication_error"));
    expect(error).toMatchObject({ code: "auth", retryable: false, status: 401 });
  });

  it("a refused connection is retryable 'unavailable'", async () => {
    const error = (await failure(agentDeps(await refusedBaseUrl(), []))).error;
    expect(error).toMatchObject({ code: "unavailable", retryable: true });
    expect(error.message).toContain("ECONNREFUSED");
  });

  it("a connection reset before any response is retryable", async () => {
    const error = await failWith(destroyConnection());
    expect(error).toMatchObject({ code: "unavailable", retryable: true });
  });

  it("a stream dropped mid-answer is retryable 'stream-dropped', after the deltas already shown", async () => {
    fake.script([dropAfter(textAnswer("The answer is coming in pieces"), 3)]);
    const { error, events } = await failure(agentDeps(fake.url, []));
    expect(error).toMatchObject({ code: "stream-dropped", retryable: true });
    // The user saw the first tokens; no finish event claims the answer is complete.
    expect(streamedText(events)).toBe("The answer is");
    expect(events.some((e) => e.type === "finish")).toBe(false);
  });

  it("a mid-stream error event (llama.cpp peg parse failure) is retryable 'stream-error'", async () => {
    const error = await failWith(errorEventAfter(textAnswer("Inherits more text"), 1));
    expect(error).toMatchObject({ code: "stream-error", retryable: true });
    expect(error.message).toContain("peg-native format");
  });

  it("a stall mid-stream longer than the idle limit is a retryable timeout", async () => {
    fake.script([stallAfter(textAnswer("slow answer here"), 1, 5_000)]);
    const started = performance.now();
    const { error } = await failure(agentDeps(fake.url, [], { idleTimeoutMs: 150 }));
    expect(error).toMatchObject({ code: "timeout", retryable: true });
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(await fake.requests[0]?.outcome).toBe("client-closed");
  });

  it("no response headers within the client timeout is a retryable timeout", async () => {
    fake.script([{ ...textAnswer("late"), headerDelayMs: 5_000 }]);
    const client = createModelClient({ baseURL: fake.url, apiKey: "sk-test", timeoutMs: 150 });
    const { error } = await failure(agentDeps(fake.url, [], { client }));
    expect(error).toMatchObject({ code: "timeout", retryable: true });
  });

  it("a failure in round 2 (after tools ran) still surfaces as ModelError", async () => {
    fake.script([toolCallAnswer([{ name: "get_weather", arguments: { city: "Paris" } }]), serverError()]);
    const { error } = await failure(agentDeps(fake.url, [weatherTool([], { Paris: 18 }, 1)]));
    expect(error).toMatchObject({ code: "server-error", status: 500 });
    expect(fake.requests).toHaveLength(2);
  });

  it("the SDK does not retry by itself: the queue owns retries", async () => {
    await failWith(serverError());
    expect(fake.requests).toHaveLength(1);
  });
});
