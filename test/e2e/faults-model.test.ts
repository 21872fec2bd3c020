/**
 * Faults of the model server, end to end: a Telegram private chat, the whole bot
 * in this process, short queue timings (test/support/fault-kit.ts). Each test injects one
 * fault and reads the chat as the user would: one bot message, replying to the question,
 * holding the whole answer (or the "model unavailable" line once retries ran out).
 */
import { describe, it, type TestContext } from "vitest";
import {
  privateChat,
  startFakeTelegram,
  type ChatMessageView,
  type FakeTelegram,
  type FakeUser,
} from "../fakes/telegram-server.js";
import {
  dropAfter,
  paced,
  serverError,
  stallAfter,
  startFakeOpenAI,
  textAnswer,
  unavailable,
  type FakeOpenAI,
} from "../fakes/openai-server.js";
import { modelUnavailableLine } from "../../src/reply/reply-view.js";
import { startStack, type Stack } from "../support/stack.js";
import { waitUntilQueueDrained } from "../support/queue-drained.js";
import { createTcpRelay, type TcpRelay } from "../support/tcp-relay.js";
import { FAST_QUEUE, jobCount, waitUntil } from "../support/fault-kit.js";

const alice: FakeUser = { id: 1001, first_name: "Alice" };
const ANSWER =
  "The tide turns twice a day, because the Moon pulls the oceans toward it and the Earth spins beneath them.";

/** One test's world: its own fake Telegram, fake model and bot (tests in this file run concurrently). */
interface World {
  tg: FakeTelegram;
  model: FakeOpenAI;
  stack: Stack;
  /** Alice asks; returns her message id. */
  ask(text?: string): number;
  /** Waits until a bot message shows `text` and the job is over; returns the bot's messages. */
  answered(text: string, timeoutMs?: number): Promise<ChatMessageView[]>;
}

async function world(
  ctx: TestContext,
  plans: Parameters<FakeOpenAI["script"]>[0],
  opts: { env?: Record<string, string>; modelUrl?: (model: FakeOpenAI) => Promise<string> } = {},
): Promise<World> {
  const tg = await startFakeTelegram();
  const model = await startFakeOpenAI();
  let stack: Stack | undefined;
  ctx.onTestFinished(async () => {
    await stack?.close(); // the bot stops before its fakes do
    await tg.close();
    await model.close();
  });
  model.script(plans);
  const modelUrl = opts.modelUrl ? await opts.modelUrl(model) : model.url;
  stack = await startStack({
    env: {
      TELEGRAM_BOT_TOKEN: tg.token,
      TELEGRAM_API_ROOT: tg.apiRoot,
      OPENAI_BASE_URL: modelUrl,
      MODEL_TIMEOUT_MS: "2000",
      ...opts.env,
    },
    worker: { queue: FAST_QUEUE },
  });
  const running = stack;
  return {
    tg,
    model,
    stack: running,
    ask(text = "Why are there two tides a day?") {
      return tg.userSays(privateChat(alice), alice, text).message.message_id as number;
    },
    async answered(text, timeoutMs = 10_000) {
      await tg.waitFor(() => tg.botMessages(alice.id).some((m) => m.text.includes(text)), {
        timeoutMs,
        what: `"${text.slice(0, 30)}…" in the chat`,
      });
      await waitUntil(
        "the job to finish",
        async () => (await jobCount(running.metrics, "done")) + (await jobCount(running.metrics, "failed")) >= 1,
      );
      return tg.botMessages(alice.id);
    },
  };
}

const okSends = (tg: FakeTelegram) => tg.calls("sendMessage").filter((c) => c.ok);

describe.concurrent("model server faults, as the user sees them", () => {
  it("refuses connections at start: the answer arrives once the server is up", async (ctx) => {
    const { expect } = ctx;
    let relay: TcpRelay | undefined;
    ctx.onTestFinished(() => relay?.close());
    const w = await world(ctx, [textAnswer(ANSWER)], {
      // A fixed model URL where nothing listens yet.
      modelUrl: async (model) => `http://127.0.0.1:${(relay = await createTcpRelay(model.port)).port}/v1`,
    });
    const asked = w.ask();

    await waitUntil("a failed attempt", async () => (await jobCount(w.stack.metrics, "retried")) >= 1);
    expect(w.model.requests).toHaveLength(0);
    expect(w.tg.botMessages(alice.id)).toEqual([]); // a retry is coming: nothing final is shown yet
    await relay!.listen(); // the model server comes up

    const shown = await w.answered(ANSWER);
    expect(shown.map((m) => m.text)).toEqual([ANSWER]);
    expect(shown[0]?.replyToMessageId).toBe(asked);
    expect(w.model.requests).toHaveLength(1);
    expect(w.tg.floodViolations()).toEqual([]);
  });

  it("answers 503 and 500, then recovers: one message with the whole answer", async (ctx) => {
    const { expect } = ctx;
    const w = await world(ctx, [unavailable("Loading model"), serverError(), textAnswer(ANSWER)]);
    const asked = w.ask();

    const shown = await w.answered(ANSWER);
    expect(shown.map((m) => m.text)).toEqual([ANSWER]);
    expect(shown[0]?.replyToMessageId).toBe(asked);
    expect(w.model.requests).toHaveLength(3);
    expect(await jobCount(w.stack.metrics, "retried")).toBe(2);
  });

  it("drops the stream after text was visible: the retry finishes the SAME message", async (ctx) => {
    const { expect } = ctx;
    // ~1.6 s of visible streaming (drafts every 1.1 s), then the connection is cut mid-sentence.
    const w = await world(ctx, [dropAfter(paced(textAnswer(ANSWER), 10), 16), textAnswer(ANSWER)]);
    const asked = w.ask();

    const shown = await w.answered(ANSWER);
    expect(await w.model.requests[0]!.outcome).toBe("dropped");
    // The user saw the first half streaming before the drop.
    const drafts = w.tg
      .calls("sendMessageDraft")
      .filter((c) => c.ok)
      .map((c) => String(c.params.text));
    expect(drafts.some((t) => t.startsWith("The tide turns"))).toBe(true);
    // Exactly one bot message: it kept the half answer, then the retry edited it to the whole answer.
    expect(shown).toHaveLength(1);
    expect(shown[0]!.text).toBe(ANSWER);
    expect(shown[0]!.replyToMessageId).toBe(asked);
    expect(shown[0]!.history[0]).toMatch(/^The tide turns/);
    expect(shown[0]!.history[0]!.length).toBeLessThan(ANSWER.length);
    expect(okSends(w.tg)).toHaveLength(1);
    expect(w.tg.floodViolations()).toEqual([]);
  });

  it("stalls (no headers, then no bytes mid-stream): timed out and retried, not waited out", async (ctx) => {
    const { expect } = ctx;
    const startedAt = Date.now();
    const w = await world(
      ctx,
      [{ ...textAnswer(ANSWER), headerDelayMs: 20_000 }, stallAfter(textAnswer(ANSWER), 3, 20_000), textAnswer(ANSWER)],
      { env: { MODEL_TIMEOUT_MS: "600" } },
    );
    w.ask();

    const shown = await w.answered(ANSWER);
    expect(Date.now() - startedAt).toBeLessThan(10_000); // neither 20 s stall was sat through
    expect(await w.model.requests[0]!.outcome).toBe("client-closed");
    expect(await w.model.requests[1]!.outcome).toBe("client-closed");
    expect(w.model.requests).toHaveLength(3);
    expect(shown.map((m) => m.text)).toEqual([ANSWER]);
  });

  it("when every retry fails, the message that showed the half answer says the model is unavailable", async (ctx) => {
    const { expect } = ctx;
    const w = await world(ctx, [dropAfter(paced(textAnswer(ANSWER), 10), 16), serverError(), serverError()]);
    const asked = w.ask();

    await waitUntil("the job to be given up", async () => (await jobCount(w.stack.metrics, "failed")) >= 1, 12_000);
    await w.tg.waitFor(() => w.tg.botMessages(alice.id).some((m) => m.text.includes(modelUnavailableLine())), {
      what: "the failure line",
    });
    expect(w.model.requests).toHaveLength(3);
    const shown = w.tg.botMessages(alice.id);
    expect(shown).toHaveLength(1);
    expect(shown[0]!.replyToMessageId).toBe(asked);
    expect(shown[0]!.text).toContain(modelUnavailableLine());
    expect(shown[0]!.history[0]).toMatch(/^The tide turns/); // the same message that held the half answer
    expect(okSends(w.tg)).toHaveLength(1);
    // Nothing more comes: the job has given up and nothing is left to run.
    await waitUntilQueueDrained(w.stack.redis);
    expect(w.model.requests).toHaveLength(3);
    expect(w.tg.botMessages(alice.id)).toHaveLength(1);
  });

  it("fails with no text visible at all: the line is the answer, once", async (ctx) => {
    const { expect } = ctx;
    const w = await world(ctx, [serverError(), serverError(), serverError()]);
    const asked = w.ask();

    await waitUntil("the job to be given up", async () => (await jobCount(w.stack.metrics, "failed")) >= 1);
    await w.tg.waitFor(() => w.tg.botMessages(alice.id).length > 0, { what: "a bot message" });
    const shown = w.tg.botMessages(alice.id);
    expect(shown.map((m) => m.text)).toEqual([modelUnavailableLine()]);
    expect(shown[0]!.replyToMessageId).toBe(asked);
    expect(w.model.requests).toHaveLength(3);
  });
});
