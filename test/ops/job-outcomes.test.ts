/**
 * The job-outcome recorder on its own: every way an attempt can end gives exactly one
 * log line and one chatbot_jobs_total count, the way the queue runtime decides the outcome.
 */
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { UnrecoverableError } from "bullmq";
import { createJobOutcomes } from "../../src/observability/job-outcomes.js";
import { createLogger } from "../../src/observability/logger.js";
import { createMetrics, type Metrics } from "../../src/observability/metrics.js";
import { JobCancelledError } from "../../src/queue/cancel-bus.js";
import type { InboundMessage } from "../../src/contracts/inbound-message.js";
import type { JobContext } from "../../src/queue/message-worker.js";

const message: InboundMessage = {
  platform: "discord",
  conversationKey: "dc:42",
  chatId: "42",
  messageId: "7",
  chatType: "group",
  author: { id: "1", displayName: "Alice" },
  text: "hi",
  receivedAt: 1_000,
};

function setup() {
  let clock = 5_000;
  let text = "";
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      text += chunk.toString();
      callback();
    },
  });
  const metrics = createMetrics();
  const outcomes = createJobOutcomes({ logger: createLogger({ level: "info", destination }), metrics, now: () => clock });
  return {
    outcomes,
    metrics,
    advance: (ms: number) => (clock += ms),
    lines: () => text.split("\n").filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

function context(opts: { attempt?: number; isFinalAttempt?: boolean; abort?: JobCancelledError } = {}): JobContext {
  const controller = new AbortController();
  if (opts.abort) controller.abort(opts.abort);
  return { jobId: "discord-42-7", attempt: opts.attempt ?? 1, isFinalAttempt: opts.isFinalAttempt ?? false, signal: controller.signal, journal: { messageIds: [], record: async () => undefined } };
}

async function jobs(metrics: Metrics): Promise<Record<string, number>> {
  const metric = await metrics.jobs.get();
  return Object.fromEntries(metric.values.map((v) => [String(v.labels.outcome), v.value]));
}

describe("job outcomes", () => {
  it("an answered job: one info line with its ids and timings, counted as done", async () => {
    const t = setup();
    await t.outcomes.observe(async () => void t.advance(250))(message, context());
    expect(t.lines()).toEqual([
      expect.objectContaining({ level: 30, msg: "job outcome", jobId: "discord-42-7", conversation: "dc:42", platform: "discord", attempt: 1, outcome: "answered", ms: 250, totalMs: 4_250 }),
    ]);
    expect(await jobs(t.metrics)).toEqual({ done: 1 });
  });

  it("a failed attempt that will be retried: a warn line with the error, counted as retried", async () => {
    const t = setup();
    const run = t.outcomes.observe(async () => {
      t.advance(40);
      throw new Error("model down");
    });
    await expect(run(message, context())).rejects.toThrow("model down");
    expect(t.lines()).toEqual([expect.objectContaining({ level: 40, outcome: "failed", attempt: 1, ms: 40, err: expect.objectContaining({ message: "model down" }) })]);
    expect(await jobs(t.metrics)).toEqual({ retried: 1 });
  });

  it("the last attempt failing: one given-up line (from the give-up handler), with that attempt's time", async () => {
    const t = setup();
    let notified = false;
    const run = t.outcomes.observe(async () => {
      t.advance(60);
      throw new Error("still down");
    });
    const giveUp = t.outcomes.observeGiveUp(async () => void (notified = true));
    const ctx = context({ attempt: 3, isFinalAttempt: true });
    const error = await run(message, ctx).catch((e: unknown) => e);
    expect(t.lines()).toEqual([]);
    await giveUp(message, ctx, error);
    expect(notified).toBe(true);
    expect(t.lines()).toEqual([expect.objectContaining({ level: 40, outcome: "given_up", attempt: 3, ms: 60, err: expect.objectContaining({ message: "still down" }) })]);
    expect(await jobs(t.metrics)).toEqual({ failed: 1 });
  });

  it("an unrecoverable error gives up at once; a give-up with no attempt here (stalled too often) has no ms", async () => {
    const t = setup();
    const run = t.outcomes.observe(async () => {
      throw new UnrecoverableError("context too long");
    });
    const giveUp = t.outcomes.observeGiveUp(async () => undefined);
    const error = await run(message, context()).catch((e: unknown) => e);
    await giveUp(message, context(), error);
    await giveUp({ ...message, messageId: "8" }, { ...context({ isFinalAttempt: true }), jobId: "discord-42-8" }, new Error("job stalled more than allowable limit"));
    expect(t.lines().map((l) => [l.jobId, l.outcome, "ms" in l])).toEqual([
      ["discord-42-7", "given_up", true],
      ["discord-42-8", "given_up", false],
    ]);
    expect(await jobs(t.metrics)).toEqual({ failed: 2 });
  });

  it("/stop and shutdown: stopped (done with what was written) and interrupted (handed back), whether the processor returns or throws", async () => {
    const t = setup();
    await t.outcomes.observe(async () => undefined)(message, context({ abort: new JobCancelledError("stop") }));
    await expect(
      t.outcomes.observe(async () => {
        throw new Error("aborted");
      })(message, context({ abort: new JobCancelledError("stop") })),
    ).rejects.toThrow();
    await expect(
      t.outcomes.observe(async () => {
        throw new JobCancelledError("shutdown");
      })(message, context({ abort: new JobCancelledError("shutdown") })),
    ).rejects.toThrow();
    expect(t.lines().map((l) => [l.outcome, l.level])).toEqual([
      ["stopped", 30],
      ["stopped", 30],
      ["interrupted", 30],
    ]);
    expect(await jobs(t.metrics)).toEqual({ cancelled: 2, interrupted: 1 });
  });
});
