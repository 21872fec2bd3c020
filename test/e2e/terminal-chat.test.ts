/**
 * `npm run chat` end to end: a real process (main.ts chat) reads questions on
 * stdin, they go through the BullMQ queue and the worker to the fake model
 * server, and the answers come out on stdout; history survives a restart.
 */
import { spawn } from "node:child_process";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startFakeOpenAI, textAnswer, toolCallAnswer, type FakeOpenAI } from "../fakes/openai-server.js";
import { createTestRedis, type TestRedis } from "../support/redis.js";

let fake: FakeOpenAI;
let redis: TestRedis;

beforeEach(async () => {
  fake = await startFakeOpenAI();
  redis = createTestRedis("chat");
});
afterEach(async () => {
  await fake.close();
  await redis.cleanup();
});

function chat(input: string, extraEnv: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts", "chat"], {
      env: {
        PATH: process.env.PATH ?? "",
        REDIS_URL: redis.url,
        KEY_PREFIX: redis.prefix,
        OPENAI_BASE_URL: fake.url,
        LOG_LEVEL: "warn",
        ...extraEnv,
      },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
    child.on("error", reject);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(input);
  });
}

describe("terminal chat", () => {
  it("answers each line through the queue and keeps the conversation across restarts", async () => {
    fake.script([textAnswer("Hello Ada! Nice to meet you.", { reasoning: "The user said hi." })]);
    const first = await chat("hi, I am Ada\n");
    expect(first.stderr).not.toMatch(/error/i);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain("Hello Ada! Nice to meet you.");
    expect(first.stdout).not.toContain("The user said hi.");

    fake.script([textAnswer("Your name is Ada.")]);
    const second = await chat("what is my name?\n");
    expect(second.stdout).toContain("Your name is Ada.");
    // The restarted process loaded the first turn from Redis and sent it to the model.
    const sent = fake.requests.at(-1)!.body as { messages: { role: string; content: string }[] };
    expect(sent.messages.map((m) => [m.role, m.content])).toEqual([
      ["system", expect.any(String)],
      ["user", "hi, I am Ada"],
      ["assistant", "Hello Ada! Nice to meet you."],
      ["user", "what is my name?"],
    ]);
  });

  it("runs a tool round and shows the final answer, /reset forgets", async () => {
    fake.script([
      toolCallAnswer([{ name: "get_time", arguments: { timezone: "Asia/Shanghai" } }]),
      textAnswer("It is afternoon in Shanghai."),
    ]);
    const run = await chat("what time is it in Shanghai?\n/reset\n");
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("It is afternoon in Shanghai.");
    expect(run.stdout).toContain("Conversation cleared");
    const toolMessage = (fake.requests[1]!.body as { messages: { role: string; content: string }[] }).messages.find((m) => m.role === "tool");
    expect(JSON.parse(toolMessage!.content)).toMatchObject({ timezone: "Asia/Shanghai" });
    // The turn was stored, then /reset removed it.
    const historyKeys = await redis.redis.keys(`${redis.prefix}:history:*`);
    expect(historyKeys.filter((k) => !k.endsWith(":reset"))).toEqual([]);
    fake.script([textAnswer("Nothing before this.")]);
    await chat("what did I ask?\n");
    const sent = fake.requests.at(-1)!.body as { messages: { role: string }[] };
    expect(sent.messages.map((m) => m.role)).toEqual(["system", "user"]);
  });

  it("takes the settings commands: the next request carries the model, thinking, persona and tools chosen, also after a restart", async () => {
    fake.script([textAnswer("Hi!"), textAnswer("Still me.")]);
    const env = { MODEL_CHOICES: "qwen3-1.7b,qwen3-4b" };
    const run = await chat("/model qwen3-9b\n/model qwen3-4b\n/think off\n/tools off read_url\n/persona Be brief.\nhello\n", env);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("Unknown model “qwen3-9b”. Choose one of: qwen3-1.7b, qwen3-4b.");
    expect(run.stdout).toContain("✅ Model here is now qwen3-4b.");
    expect(run.stdout).toContain("✅ read_url is now off here.");
    const body = fake.requests[0]!.body;
    expect(body.model).toBe("qwen3-4b");
    expect(body.chat_template_kwargs).toEqual({ enable_thinking: false });
    expect((body.tools ?? []).map((t) => t.function.name).sort()).toEqual(["get_news", "get_time", "get_weather"]);
    expect(String(body.messages?.[0]?.content)).toContain("Your persona in this chat (the rules above still apply): Be brief.");

    const again = await chat("/settings\nand now?\n", env);
    expect(again.stdout).toContain("• Model: qwen3-4b\n• Thinking: off\n");
    expect(fake.requests[1]!.body.model).toBe("qwen3-4b");
  });

  it("stops with a clear message when Redis does not answer", async () => {
    const run = await chat("hi\n", { REDIS_URL: "redis://127.0.0.1:1" });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(/Redis does not answer at redis:\/\/127\.0\.0\.1:1/);
  });

  it("stops with a message naming a bad variable", async () => {
    const run = await chat("hi\n", { MAX_TOOL_ROUNDS: "many" });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/MAX_TOOL_ROUNDS: expected a whole number/);
  });
});
