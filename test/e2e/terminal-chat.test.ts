/**
 * `npm run chat` end to end: a real process (main.ts chat) reads questions on
 * stdin, they go through the BullMQ queue and the worker to the fake model
 * server, and the answers come out on stdout; history survives a restart.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { devNull, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  refusedBaseUrl,
  serverError,
  startFakeOpenAI,
  textAnswer,
  toolCallAnswer,
  type FakeOpenAI,
} from "../fakes/openai-server.js";
import { createTestRedis, type TestRedis } from "../support/redis.js";
import { runCli, type CliRun } from "../support/run-cli.js";
import { createTcpRelay } from "../support/tcp-relay.js";

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

function chat(
  input: string,
  extraEnv: Record<string, string> = {},
  more: { flags?: string[]; onStderr?: (soFar: string) => void; timeoutMs?: number } = {},
): Promise<CliRun> {
  return runCli("src/main.ts", ["chat", ...(more.flags ?? [])], {
    env: { REDIS_URL: redis.url, KEY_PREFIX: redis.prefix, OPENAI_BASE_URL: fake.url, LOG_LEVEL: "warn", ...extraEnv },
    input,
    ...(more.onStderr ? { onStderr: more.onStderr } : {}),
    ...(more.timeoutMs ? { timeoutMs: more.timeoutMs } : {}),
  });
}

// Each case starts real processes through tsx: seconds apiece on two shared cores.
describe("terminal chat", { timeout: 60_000 }, () => {
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
    const toolMessage = (fake.requests[1]!.body as { messages: { role: string; content: string }[] }).messages.find(
      (m) => m.role === "tool",
    );
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
    const run = await chat(
      "/model qwen3-9b\n/model qwen3-4b\n/think off\n/tools off read_url\n/persona Be brief.\nhello\n",
      env,
    );
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("Unknown model “qwen3-9b”. Choose one of: qwen3-1.7b, qwen3-4b.");
    expect(run.stdout).toContain("✅ Model here is now qwen3-4b.");
    expect(run.stdout).toContain("✅ read_url is now off here.");
    const body = fake.requests[0]!.body;
    expect(body.model).toBe("qwen3-4b");
    expect(body.chat_template_kwargs).toEqual({ enable_thinking: false });
    expect((body.tools ?? []).map((t) => t.function.name).sort()).toEqual([
      "cancel_schedule",
      "get_news",
      "get_time",
      "get_weather",
      "list_schedules",
      "schedule_message",
    ]);
    expect(String(body.messages?.[0]?.content)).toContain(
      "Your persona in this chat (the rules above still apply): Be brief.",
    );

    const again = await chat("/settings\nand now?\n", env);
    expect(again.stdout).toContain("• Model: qwen3-4b\n• Thinking: off\n");
    expect(fake.requests[1]!.body.model).toBe("qwen3-4b");
  });

  it("no Redis at REDIS_URL: starts a private redis-server for the session, says so in one line, and chats", async () => {
    fake.script([textAnswer("Hello from a private Redis.")]);
    const run = await chat("hi\n", { REDIS_URL: "redis://127.0.0.1:1" });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("Hello from a private Redis.");
    expect(run.stderr).toMatch(
      /^ℹ No Redis answers at redis:\/\/127\.0\.0\.1:1: started a private redis-server on 127\.0\.0\.1:\d+ for this session \(forgotten when you leave\)\.$/m,
    );
    expect(run.stderr).not.toMatch(/^\{| {4}at /m);
  });

  it("no Redis and no redis-server on PATH: one line saying how to get one, exit code 1", async () => {
    const emptyBin = mkdtempSync(join(tmpdir(), "no-redis-bin-"));
    try {
      const run = await chat("hi\n", { REDIS_URL: "redis://127.0.0.1:1", PATH: emptyBin });
      expect(run.code).toBe(1);
      const lines = run.stderr
        .trim()
        .split("\n")
        .filter((l) => !l.startsWith("Logs: "));
      expect(lines).toEqual([
        "✗ No Redis answers at redis://127.0.0.1:1 and there is no redis-server on PATH. Install one (Debian/Ubuntu: sudo apt-get install redis-server; macOS: brew install redis), run one (docker run -d -p 6379:6379 redis:7-alpine), or set REDIS_URL.",
      ]);
    } finally {
      rmSync(emptyBin, { recursive: true, force: true });
    }
  });

  it("model server down: one line with its URL and the command that starts one; a question gives up at once and says why and how", async () => {
    const down = await refusedBaseUrl();
    const run = await chat("hi\n", {
      OPENAI_BASE_URL: down,
      QUEUE_ATTEMPTS: "4",
      // Retrying as the bots do would take 2 + 4 + 8 s here.
      QUEUE_RETRY_BACKOFF_MS: "2000",
      LOG_LEVEL: "info",
    });
    expect(run.code).toBe(0);
    const lines = run.stderr.trim().split("\n");
    expect(lines[0]).toMatch(/^Logs: \S+chat\.log$/);
    expect(lines[1]).toBe(
      `⚠ no model server answers at ${down} (ECONNREFUSED). To chat, start one: llama-server -hf Qwen/Qwen3-1.7B-GGUF:Q8_0 --jinja (or set OPENAI_BASE_URL to your server). You can type already; answers need the server.`,
    );
    // The question still gets an answer: the model is unavailable, said in the chat.
    expect(run.stdout.match(/The model is unavailable right now/g)).toHaveLength(1);
    // Start-up already knew: no retries, and the last line keeps the reason and the fix.
    expect(lines.filter((l) => l.startsWith("⏳"))).toEqual([]);
    expect(lines.at(-1)).toBe(
      `⚠ no model server answers at ${down} (ECONNREFUSED). To chat, start one: llama-server -hf Qwen/Qwen3-1.7B-GGUF:Q8_0 --jinja (or set OPENAI_BASE_URL to your server).`,
    );
    // No JSON log lines or stack traces over the conversation: they went to the log file.
    expect(run.stdout + run.stderr).not.toMatch(/^\{"level"|^\s+at /m);
    const logFile = lines[0]!.slice("Logs: ".length);
    expect(readFileSync(logFile, "utf8")).toMatch(/"msg":"job outcome"/);
  });

  it("--wait-for-model (the compose chat service) waits for a model server that starts late, then chats", async () => {
    const relay = await createTcpRelay(fake.port);
    try {
      fake.script([textAnswer("Ready now.")]);
      // The model server comes up once the chat has said it is waiting.
      let started = false;
      const run = await chat(
        "hi\n",
        { OPENAI_BASE_URL: `http://127.0.0.1:${relay.port}/v1` },
        {
          flags: ["--wait-for-model"],
          onStderr: (soFar) => {
            if (started || !soFar.includes("⏳ Waiting")) return;
            started = true;
            void relay.listen();
          },
        },
      );
      expect(run.code).toBe(0);
      expect(run.stderr).toContain(
        `⏳ Waiting for the model server (no model server answers at http://127.0.0.1:${relay.port}/v1 (ECONNREFUSED); 0 s). Its first start downloads the model (about 2 GB): docker compose logs -f model shows the progress.`,
      );
      expect(run.stdout).toContain("Ready now.");
    } finally {
      await relay.close();
    }
  });

  it("a retry shows as one status line, then the answer", async () => {
    fake.script([serverError("Loading model"), textAnswer("Back again.")]);
    const run = await chat("hi\n", { QUEUE_ATTEMPTS: "3", QUEUE_RETRY_BACKOFF_MS: "50" });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("Back again.");
    const status = run.stderr.split("\n").filter((l) => l.startsWith("⏳"));
    expect(status).toHaveLength(1);
    expect(status[0]).toMatch(/^⏳ The model did not answer \(.*Loading model.*\); retrying, attempt 2 of 3…$/);
    expect(run.stderr).not.toMatch(/^\{"level"|^\s+at /m);
  });

  it("after a hard quit mid-answer, the next chat answers at once in a new conversation, says so, and never shows the old answer", async () => {
    const story = Array.from({ length: 400 }, (_, i) => `story${i}`).join(" ");
    fake.script([{ ...textAnswer(story), tokensPerSecond: 5 }, textAnswer("Hello again!")]);
    // The first session is killed while the model writes (stdin stays open: the person is still there).
    const first = spawn(process.execPath, ["--import", "tsx", "src/main.ts", "chat"], {
      cwd: new URL("../..", import.meta.url),
      env: {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? "",
        ENV_FILE: devNull,
        REDIS_URL: redis.url,
        KEY_PREFIX: redis.prefix,
        OPENAI_BASE_URL: fake.url,
      },
      stdio: ["pipe", "ignore", "ignore"],
    });
    first.stdin.write("tell me a long story\n");
    await expect.poll(() => fake.requests.length, { timeout: 30_000 }).toBe(1);
    const gone = new Promise((resolve) => first.once("exit", resolve));
    first.kill("SIGKILL");
    await gone;

    // Without the new conversation this waits behind the dead job until it counts as stalled (a minute and more).
    const second = await chat("hello again\n", {}, { timeoutMs: 40_000 });
    expect(second.code).toBe(0);
    expect(second.stdout).toContain(
      "ℹ Your last chat ended while an answer was being written: this one starts a new conversation (the unfinished answer is dropped).",
    );
    expect(second.stdout).toContain("Hello again!");
    expect(second.stdout).not.toContain("story");
    const sent = fake.requests[1]!.body as { messages: { role: string; content: string }[] };
    expect(sent.messages.map((m) => m.role)).toEqual(["system", "user"]);
  });

  it("stops with a message naming a bad variable", async () => {
    const run = await chat("hi\n", { MAX_TOOL_ROUNDS: "many" });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/MAX_TOOL_ROUNDS: expected a whole number/);
  });
});
