/**
 * A worker process dies or is stopped mid-answer. The adapter runs in this process;
 * the answering worker is a real child process (`src/main.ts worker`, test/support/stack-process.ts)
 * with short queue timings through the environment (QUEUE_LOCK_MS…). A second worker (in this
 * process) is ready to take over. What the user must see: the answer completes exactly once,
 * in the same Telegram message that was streaming when the first worker went away.
 */
import { describe, it, type TestContext } from "vitest";
import { startFakeTelegram, type FakeChat, type FakeTelegram, type FakeUser } from "../fakes/telegram-server.js";
import { paced, startFakeOpenAI, textAnswer, type FakeOpenAI } from "../fakes/openai-server.js";
import { startStack, type Stack } from "../support/stack.js";
import { spawnRole, type RoleProcess } from "../support/stack-process.js";
import { FAST_QUEUE, FAST_QUEUE_ENV, jobCount, waitUntil } from "../support/fault-kit.js";

const ANSWER =
  "Lighthouses use Fresnel lenses: rings of prisms that bend the lamp's light into one flat beam, so a small flame is seen twenty miles out at sea.";
const bob: FakeUser = { id: 4001, first_name: "Bob" };
const group: FakeChat = { id: -100400, type: "group", title: "Keepers" };

interface KillWorld {
  tg: FakeTelegram;
  model: FakeOpenAI;
  /** The adapter (bots role) in this process. */
  bots: Stack;
  /** The worker process that takes the question first. */
  first: RoleProcess;
  /** Starts the takeover worker in this process. */
  startSecondWorker(): Promise<Stack>;
  /** Bob asks in the group; returns his message id. */
  ask(): number;
}

/** The fakes, the adapter, and worker process #1 (whose first answer streams slowly: ~5 tokens/s, ~6 s). */
async function killWorld(ctx: TestContext, env: Record<string, string> = {}): Promise<KillWorld> {
  const tg = await startFakeTelegram();
  const model = await startFakeOpenAI((request) =>
    request.index === 0 ? paced(textAnswer(ANSWER), 5) : textAnswer(ANSWER),
  );
  const stacks: Stack[] = [];
  let first: RoleProcess | undefined;
  ctx.onTestFinished(async () => {
    first?.kill("SIGKILL");
    await first?.exited;
    for (const s of stacks.reverse()) await s.close();
    await tg.close();
    await model.close();
  });
  const base = { TELEGRAM_BOT_TOKEN: tg.token, TELEGRAM_API_ROOT: tg.apiRoot, OPENAI_BASE_URL: model.url };
  const bots = await startStack({ env: base, roles: ["bots"] });
  stacks.push(bots);
  first = await spawnRole("worker", { ...bots.env, ...FAST_QUEUE_ENV, ...env });
  const running = first;
  return {
    tg,
    model,
    bots,
    first: running,
    async startSecondWorker() {
      const second = await startStack({
        env: base,
        redis: bots.redis,
        roles: ["worker"],
        worker: { queue: FAST_QUEUE },
      });
      stacks.push(second);
      return second;
    },
    ask: () =>
      tg.userSays(group, bob, `@${tg.me.username} how does a lighthouse reach so far?`).message.message_id as number,
  };
}

/** The bot's messages in the group, once the one holding part of the answer is visible. */
async function streamingVisible(tg: FakeTelegram) {
  return tg.waitFor(() => tg.botMessages(group.id).find((m) => m.text.startsWith("Lighthouses") && m.text !== ANSWER), {
    timeoutMs: 10_000,
    what: "part of the answer in the chat",
  });
}

/** Waits for the final answer (Stop button gone) and returns the group's bot messages. */
async function finalAnswer(tg: FakeTelegram, timeoutMs = 12_000) {
  await tg.waitFor(() => tg.botMessages(group.id).some((m) => m.text === ANSWER && (m.buttons ?? []).length === 0), {
    timeoutMs,
    what: "the final answer",
  });
  return tg.botMessages(group.id);
}

describe("a worker process going away mid-answer", () => {
  it("SIGKILL mid-stream: another worker continues the SAME message; one answer", async (ctx) => {
    const { expect } = ctx;
    const w = await killWorld(ctx);
    const asked = w.ask();
    const streaming = await streamingVisible(w.tg);
    const second = await w.startSecondWorker(); // idle and ready before the first one dies
    w.first.kill("SIGKILL");
    expect(await w.first.exited).toBe("SIGKILL");

    const shown = await finalAnswer(w.tg);
    expect(shown).toHaveLength(1);
    expect(shown[0]!.messageId).toBe(streaming.messageId); // the message that was streaming…
    expect(shown[0]!.text).toBe(ANSWER); // …now holds the whole answer
    expect(shown[0]!.replyToMessageId).toBe(asked);
    expect(w.tg.calls("sendMessage").filter((c) => c.ok)).toHaveLength(1);
    expect(w.model.requests).toHaveLength(2); // the dead worker's request and the takeover's
    expect(await w.model.requests[0]!.outcome).toBe("client-closed");
    await waitUntil("the takeover to finish the job", async () => (await jobCount(second.metrics, "done")) === 1);
    expect(w.tg.floodViolations()).toEqual([]);
  });

  it("SIGTERM mid-stream: the worker finishes the answer, then exits 0", async (ctx) => {
    const { expect } = ctx;
    const w = await killWorld(ctx);
    const asked = w.ask();
    await streamingVisible(w.tg);
    const second = await w.startSecondWorker();
    w.first.kill("SIGTERM");

    const shown = await finalAnswer(w.tg);
    expect(await w.first.exited).toBe(0);
    expect(shown.map((m) => m.text)).toEqual([ANSWER]);
    expect(shown[0]!.replyToMessageId).toBe(asked);
    expect(w.model.requests).toHaveLength(1); // nobody had to ask the model again
    expect(await jobCount(second.metrics, "done")).toBe(0);
    expect(w.first.output()).toMatch(/"msg":"shutting down"/);
  });

  it("SIGTERM with a short grace: the answer is handed over and finished in the same message", async (ctx) => {
    const { expect } = ctx;
    const w = await killWorld(ctx, { SHUTDOWN_GRACE_MS: "300" });
    const asked = w.ask();
    const streaming = await streamingVisible(w.tg);
    const second = await w.startSecondWorker();
    w.first.kill("SIGTERM");

    const shown = await finalAnswer(w.tg);
    expect(await w.first.exited).toBe(0);
    expect(shown).toHaveLength(1);
    expect(shown[0]!.messageId).toBe(streaming.messageId);
    expect(shown[0]!.text).toBe(ANSWER);
    expect(shown[0]!.replyToMessageId).toBe(asked);
    expect(w.model.requests).toHaveLength(2);
    await waitUntil("the takeover to finish the job", async () => (await jobCount(second.metrics, "done")) === 1);
    expect(w.first.output()).toMatch(/handed back to the queue/);
  });
});
