/** `npm run ask -- "question"` as a person runs it: a real process streaming the loop into the terminal. */
import { describe, expect } from "vitest";
import { runCli } from "../support/run-cli.js";
import { refusedBaseUrl, textAnswer, toolCallAnswer } from "../fakes/openai-server.js";
import { e2eTest } from "../support/fixtures.js";

const ask = (args: string[], env: Record<string, string>) => runCli("src/ask.ts", args, { env, timeoutMs: 15_000 });

// Each case starts real processes through tsx: seconds apiece on two shared cores.
describe("npm run ask", { timeout: 60_000 }, () => {
  e2eTest("streams reasoning, the tool call and its result, then the answer", async ({ model: fake }) => {
    fake.script([
      toolCallAnswer([{ name: "get_time", arguments: { timezone: "Asia/Shanghai" } }], { reasoning: "用户问时间。" }),
      textAnswer("现在是上海时间下午两点。"),
    ]);
    const { code, stdout } = await ask(["现在几点？"], { OPENAI_BASE_URL: fake.url, SHOW_REASONING: "collapsed" });
    expect(code).toBe(0);
    expect(stdout).toContain("用户问时间。");
    expect(stdout).toContain('🔧 get_time({"timezone": "Asia/Shanghai"})…');
    expect(stdout).toMatch(/✓ get_time \(\d+ ms\): \{"timezone":"Asia\/Shanghai"/);
    expect(stdout).toContain("现在是上海时间下午两点。");
    expect(fake.requests[0]?.body.messages?.at(-1)).toEqual({ role: "user", content: "现在几点？" });
  });

  e2eTest("model server down: one line with its URL and the command that starts one, exit code 1", async () => {
    const down = await refusedBaseUrl();
    const { code, stdout, stderr } = await ask(["hi"], { OPENAI_BASE_URL: down });
    expect(code).toBe(1);
    expect(stdout).toBe("");
    expect(stderr).toBe(
      `✗ no model server answers at ${down} (ECONNREFUSED). To ask, start one: llama-server -hf Qwen/Qwen3-1.7B-GGUF:Q8_0 --jinja (or set OPENAI_BASE_URL to your server).\n`,
    );
  });

  e2eTest("--help prints the usage and asks the model nothing", async ({ model: fake }) => {
    const { code, stdout } = await ask(["--help"], { OPENAI_BASE_URL: fake.url });
    expect(code).toBe(0);
    expect(stdout).toMatch(/^usage: npm run ask -- "your question"/);
    expect(fake.requests).toEqual([]);
  });
});
