/**
 * A request over the model's context is refused with each server's own wording; the loop
 * recognises all of them, reads by how much the request was over, and retries the round once
 * on a history cut harder.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ModelError } from "../../src/agent/model-error.js";
import { runAgent } from "../../src/agent/run-agent.js";
import type { ChatMessage } from "../../src/contracts/chat-message.js";
import {
  contextExceeded,
  httpError,
  startFakeOpenAI,
  textAnswer,
  type FakeOpenAI,
  type ResponsePlan,
} from "../fakes/openai-server.js";
import { agentDeps, user } from "./agent-harness.js";

let fake: FakeOpenAI;
beforeEach(async () => {
  fake = await startFakeOpenAI();
});
afterEach(async () => {
  await fake.close();
});

/** Runs the loop once with `plan` as the first response; what it threw (or undefined). */
async function refusalOf(plan: ResponsePlan): Promise<ModelError | undefined> {
  fake.script([plan]);
  try {
    for await (const _event of runAgent(agentDeps(fake.url, []), { messages: [user("Hi")] })) void _event;
  } catch (error) {
    return error as ModelError;
  }
  return undefined;
}

describe("context-size refusals", () => {
  it("recognises llama.cpp, vLLM and Ollama wording and reads the excess", async () => {
    expect(await refusalOf(contextExceeded(5009, 4096))).toMatchObject({ code: "context-exceeded", excessTokens: 913 });
    expect(
      await refusalOf(
        httpError(
          400,
          "This model's maximum context length is 8192 tokens. However, you requested 8203 tokens (7691 in the messages, 512 in the completion). Please reduce the length of the messages or completion.",
          "BadRequestError",
        ),
      ),
    ).toMatchObject({ code: "context-exceeded", excessTokens: 11 });
    expect(
      await refusalOf(
        httpError(400, "prompt too long; exceeded max context length by 540 tokens", "invalid_request_error"),
      ),
    ).toMatchObject({
      code: "context-exceeded",
      excessTokens: 540,
    });
    // Another 400 is not mistaken for one.
    expect(await refusalOf(httpError(400, "'messages' is required", "invalid_request_error"))).toMatchObject({
      code: "bad-request",
    });
  });

  it("retries the round once on the shorter history it is given, and only once", async () => {
    const long: ChatMessage[] = [user("old question"), { role: "assistant", content: "old answer" }, user("Hi")];
    const asked: { excessTokens?: number }[] = [];
    fake.script([contextExceeded(5009, 4096), textAnswer("Hello!")]);
    const events = [];
    for await (const event of runAgent(agentDeps(fake.url, []), {
      messages: long,
      shrinkHistory: async (messages, refusal) => {
        asked.push(refusal);
        return messages.slice(-1);
      },
    }))
      events.push(event);
    expect(events.at(-1)).toMatchObject({ type: "finish", reason: "stop", text: "Hello!" });
    expect(asked).toEqual([{ excessTokens: 913 }]);
    expect(fake.requests[1]?.body.messages?.slice(1)).toEqual([{ role: "user", content: "Hi" }]);

    // A second refusal is the answer: no loop of retries.
    fake.script([contextExceeded(), contextExceeded()]);
    const before = fake.requests.length;
    await expect(
      (async () => {
        for await (const _event of runAgent(agentDeps(fake.url, []), {
          messages: long,
          shrinkHistory: async (m) => m.slice(-1),
        }))
          void _event;
      })(),
    ).rejects.toMatchObject({ code: "context-exceeded" });
    expect(fake.requests.length - before).toBe(2);
  });
});
