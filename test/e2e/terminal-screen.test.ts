/**
 * `npm run chat` as a person sees it: the real program in an 80-column pseudo-terminal (tmux),
 * against the fake model server, the screen read back with `capture-pane`. A streamed answer
 * that wraps (Chinese, emoji) is redrawn in place, also across a resize; it shows plain text,
 * not Markdown escapes; `/help` is one command a line; Ctrl-C stops an answer at once and a
 * second Ctrl-C leaves.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startFakeOpenAI, textAnswer, toolCallAnswer, type FakeOpenAI } from "../fakes/openai-server.js";
import { createTestRedis, type TestRedis } from "../support/redis.js";
import { startTmuxChat, type TmuxChat } from "../support/tmux-chat.js";

let fake: FakeOpenAI;
let redis: TestRedis;
let chat: TmuxChat | undefined;

beforeEach(async () => {
  fake = await startFakeOpenAI();
  redis = createTestRedis("chat-screen");
});
afterEach(async () => {
  chat?.close();
  chat = undefined;
  await fake.close();
  await redis.cleanup();
});

function start(extraEnv: Record<string, string> = {}): TmuxChat {
  chat = startTmuxChat({
    REDIS_URL: redis.url,
    KEY_PREFIX: redis.prefix,
    OPENAI_BASE_URL: fake.url,
    SHOW_REASONING: "off",
    ...extraEnv,
  });
  return chat;
}

const count = (lines: string[], part: string) => lines.filter((l) => l.includes(part)).length;

/** A Chinese paragraph with emoji: about 130 screen columns, but about 70 characters. */
const WIDE = "北京今天晴，气温二十四度，☀️ 适合出门散步。上海多云，气温二十八度，🌤️ 比北京更热一些，记得多喝水。";

// Each case starts the real program through tsx: seconds apiece on two shared cores.
describe("terminal chat on the screen", { timeout: 90_000 }, () => {
  it("redraws a streamed answer of wide characters in place at 80 columns, also after a resize, as plain text", async () => {
    const tty = start();
    await expect.poll(() => tty.lines().join("\n"), { timeout: 30_000 }).toContain("/help for commands");
    fake.script([
      toolCallAnswer([{ name: "get_time", arguments: { timezone: "Asia/Shanghai" } }]),
      { ...textAnswer(`${WIDE}\n\n**${WIDE}**\n\n${WIDE}`), tokensPerSecond: 25 },
    ]);
    tty.type("北京和上海今天哪里更热？");
    await expect.poll(() => count(tty.lines(), "上海多云"), { timeout: 30_000 }).toBeGreaterThan(0);
    tty.resize(60);
    await expect.poll(() => fake.remaining, { timeout: 30_000 }).toBe(0);
    // The last paragraph complete: the answer is final.
    await expect.poll(() => count(tty.lines(), "记得多喝水"), { timeout: 30_000 }).toBe(3);
    const lines = tty.lines();
    // One tool line, one copy of each paragraph: nothing left behind by a redraw.
    expect(count(lines, "get_time(")).toBe(1);
    expect(count(lines, "北京今天晴")).toBe(3);
    expect(lines.join("\n")).toContain("get_time(Asia/Shanghai)");
    expect(lines.join("\n")).not.toMatch(/\\_|\*\*/);
  });

  it("/help lists one command a line, and the settings speak of no buttons", async () => {
    const tty = start({ MODEL_CHOICES: "qwen3-1.7b,qwen3-4b" });
    await expect.poll(() => tty.lines().join("\n"), { timeout: 30_000 }).toContain("/help for commands");
    tty.type("/help");
    tty.type("/model");
    await expect.poll(() => tty.lines().join("\n"), { timeout: 30_000 }).toContain("Choose with /model <name>");
    const lines = tty.lines();
    for (const command of ["/reset", "/compact", "/stop", "/quit", "/settings", "/model", "/think", "/tools"])
      expect(lines.filter((l) => l.trimStart().startsWith(command)).length, command).toBeGreaterThanOrEqual(1);
    const helpLines = lines.filter((l) => l.startsWith("  /"));
    expect(helpLines.length).toBeGreaterThanOrEqual(10);
    expect(helpLines.every((l) => l.length <= 80)).toBe(true);
    expect(lines.join("\n")).not.toMatch(/button/i);
  });

  it("the first Ctrl-C stops the answer at once and says so; the second leaves", async () => {
    const tty = start();
    await expect.poll(() => tty.lines().join("\n"), { timeout: 30_000 }).toContain("/help for commands");
    const story = Array.from({ length: 300 }, (_, i) => `word${i}`).join(" ");
    fake.script([{ ...textAnswer(story), tokensPerSecond: 10 }]);
    tty.type("tell me a long story");
    await expect.poll(() => tty.lines().join("\n"), { timeout: 30_000 }).toContain("word3 ");
    tty.keys("C-c");
    await expect.poll(() => tty.lines().join("\n"), { timeout: 3000 }).toContain("⏹ Stopped. (Ctrl-C again leaves.)");
    // The model request was cut off, and the answer says it stopped (plain text, no Markdown).
    await expect.poll(() => fake.requests[0]?.outcome, { timeout: 10_000 }).toBe("client-closed");
    await expect
      .poll(() => tty.lines().join("\n"), { timeout: 10_000 })
      .toMatch(/word\d+ ?\n+⏹ stopped\n.*⏹ Stopped\. \(Ctrl-C again leaves\.\)$/m);
    expect(tty.exited()).toBe(false);
    tty.keys("C-c");
    await expect.poll(() => (tty.exited() ? true : tty.lines().join("\n")), { timeout: 30_000 }).toBe(true);
    expect(tty.lines().join("\n")).not.toContain("word299");
  });
});
