/**
 * A worker process for the multi-process tests: runs createMessageWorker with a
 * processor steered by the message text, and logs start/end/abort per message into
 * Redis (`<prefix>:test:events`) with its pid.
 *   sleep:<ms>       work for <ms>
 *   hang-once:<ms>   hang (until aborted or killed) on the first run of the job; later runs (the
 *                    journal already holds a message id) work for <ms>
 *   wait-stop        work until /stop
 * The first run of a job records `msg-<pid>-<jobId>` in its reply journal, as a reply engine would.
 * Prints "ready" once it takes jobs. SIGTERM → close({ graceMs }) → exit 0.
 */
import { Redis } from "ioredis";
import { cancelKindOf } from "../../src/queue/cancel-bus.js";
import { createMessageWorker } from "../../src/queue/message-worker.js";
import type { WorkerProcessConfig } from "./support/queue-test-kit.js";

const config = JSON.parse(process.argv[2] ?? "{}") as WorkerProcessConfig;
const log = new Redis(config.url);
const key = `${config.prefix}:test:events`;
const record = async (event: Record<string, unknown>): Promise<void> => {
  await log.rpush(key, JSON.stringify({ ...event, pid: process.pid, t: Date.now() }));
};

// Never outlive a test run by much, whatever happens to the parent.
setTimeout(() => process.exit(3), 120_000).unref();

function work(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      reject(signal.reason);
    });
  });
}

const worker = createMessageWorker({
  connection: config.url,
  prefix: config.prefix,
  concurrency: config.concurrency,
  lockDurationMs: config.lockDurationMs,
  stalledIntervalMs: config.stalledIntervalMs,
  runningTtlMs: config.runningTtlMs,
  repairIntervalMs: 1000,
  attempts: 3,
  backoffMs: 50,
  async process(message, ctx) {
    const conv = message.conversationKey;
    const firstRun = ctx.journal.messageIds.length === 0;
    await record({ kind: "start", jobId: ctx.jobId, conv, attempt: ctx.attempt, messageIds: ctx.journal.messageIds });
    if (firstRun) await ctx.journal.record([`msg-${process.pid}-${ctx.jobId}`]);
    const [mode, arg] = message.text.split(":");
    const ms = mode === "wait-stop" || (mode === "hang-once" && firstRun) ? 60_000 : Number(arg ?? 10);
    try {
      await work(ms, ctx.signal);
    } catch (error) {
      const cancel = cancelKindOf(ctx.signal);
      await record({ kind: "aborted", jobId: ctx.jobId, conv, cancel });
      if (cancel === "stop") {
        await record({ kind: "stopped", jobId: ctx.jobId, conv, messageIds: ctx.journal.messageIds });
        return;
      }
      throw error;
    }
    await record({ kind: "end", jobId: ctx.jobId, conv, messageIds: ctx.journal.messageIds });
  },
  async onGiveUp(message, ctx) {
    await record({ kind: "giveup", jobId: ctx.jobId, conv: message.conversationKey });
  },
});

process.on("SIGTERM", () => {
  void (async () => {
    await worker.close({ graceMs: config.graceMs ?? 10_000 });
    await record({ kind: "closed" });
    log.disconnect();
    process.exit(0);
  })();
});

await worker.ready();
await record({ kind: "ready" });
process.stdout.write("ready\n");
