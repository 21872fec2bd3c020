/** `npm run ask -- "question"` as a person runs it: a real process streaming the loop into the terminal. */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { refusedBaseUrl, startFakeOpenAI, textAnswer, toolCallAnswer, type FakeOpenAI } from "../fakes/openai-server.js";
import { devNull } from "node:os";

const root = fileURLToPath(new URL("../../", import.meta.url));

function ask(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "src/ask.ts", ...args], {
      cwd: root,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ENV_FILE: devNull, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

let fake: FakeOpenAI;
beforeEach(async () => {
  fake = await startFakeOpenAI();
});
afterEach(async () => {
  await fake.close();
});

describe("npm run ask", () => {
  it("streams reasoning, the tool call and its result, then the answer", async () => {
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

  it("model server down: one line with its URL and the command that starts one, exit code 1", async () => {
    const down = await refusedBaseUrl();
    const { code, stdout, stderr } = await ask(["hi"], { OPENAI_BASE_URL: down });
    expect(code).toBe(1);
    expect(stdout).toBe("");
    expect(stderr).toBe(
      `✗ no model server answers at ${down} (ECONNREFUSED). To ask, start one: llama-server -hf Qwen/Qwen3-1.7B-GGUF:Q8_0 --jinja (or set OPENAI_BASE_URL to your server).\n`,
    );
  });
});
