/**
 * Redis restarted under load: a private redis-server with an fsync'd AOF on a
 * free port is stopped and started again while a worker answers and an adapter enqueues.
 * Nothing accepted is lost, nothing is answered twice, conversations stay in order.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { jobIdFor } from "../../src/contracts/inbound-message.js";
import { createMessageQueue } from "../../src/queue/message-queue.js";
import { createMessageWorker, type MessageWorker } from "../../src/queue/message-worker.js";
import { message, waitFor } from "./support/queue-test-kit.js";
import { freePort } from "../support/free-port.js";
import { waitUntilQueueDrained } from "../support/queue-drained.js";

let server: ChildProcess | undefined;
let dir: string | undefined;
const cleanups: (() => Promise<unknown> | unknown)[] = [];

afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  server?.kill("SIGKILL");
  server = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function startRedis(port: number): Promise<void> {
  server = spawn(
    "redis-server",
    [
      "--port",
      String(port),
      "--bind",
      "127.0.0.1",
      "--save",
      "",
      "--appendonly",
      "yes",
      "--appendfsync",
      "always",
      "--dir",
      dir as string,
    ],
    { stdio: "ignore" },
  );
  const probe = new Redis(port, "127.0.0.1", { lazyConnect: true, retryStrategy: () => 50, maxRetriesPerRequest: 1 });
  probe.on("error", () => undefined);
  try {
    await waitFor("redis-server to answer", async () => (await probe.ping().catch(() => "")) === "PONG", 5000);
  } finally {
    probe.disconnect();
  }
}

async function stopRedis(): Promise<void> {
  const s = server;
  if (!s) return;
  const gone = new Promise((r) => s.once("exit", r));
  s.kill("SIGTERM");
  await gone;
}

describe("Redis restart under load", () => {
  it("loses nothing and answers nothing twice when Redis restarts mid-stream", async () => {
    dir = mkdtempSync(join(tmpdir(), "chatbot-restart-"));
    const port = await freePort();
    const url = `redis://127.0.0.1:${port}`;
    await startRedis(port);

    const prefix = "restart";
    const adapterRedis = new Redis(url, { retryStrategy: () => 100 });
    adapterRedis.on("error", () => undefined);
    let reconnects = 0;
    adapterRedis.on("reconnecting", () => reconnects++);
    cleanups.push(() => adapterRedis.disconnect());
    const queue = createMessageQueue({ connection: adapterRedis, prefix });
    cleanups.push(() => queue.close().catch(() => undefined));

    const ends: { conv: string; jobId: string }[] = [];
    const worker: MessageWorker = createMessageWorker({
      connection: url,
      prefix,
      concurrency: 4,
      lockDurationMs: 10_000,
      stalledIntervalMs: 1000,
      repairIntervalMs: 500,
      backoffMs: 50,
      async process(m, ctx) {
        await new Promise((r) => setTimeout(r, 40));
        ends.push({ conv: m.conversationKey, jobId: ctx.jobId });
      },
      onGiveUp: async () => undefined,
    });
    cleanups.push(() => worker.close({ graceMs: 0 }));
    await worker.ready();

    const convs = ["tg:1", "tg:2", "dc:3"];
    const expected = new Map<string, string[]>(convs.map((c) => [c, []]));
    const offer = async (conv: string, id: string): Promise<void> => {
      const m = message(conv, id, "x");
      expected.get(conv)?.push(jobIdFor(m));
      expect((await queue.enqueue(m)).status).toBe("queued");
    };
    for (let i = 0; i < 5; i++) for (const c of convs) await offer(c, `a${i}`);
    await waitFor("some answers before the restart", () => ends.length >= 3);

    await stopRedis();
    // An adapter enqueues while Redis is down: it resolves only once Redis has the message.
    const retriesBefore = reconnects;
    let enqueued = false;
    const duringOutage = offer("tg:1", "during").finally(() => (enqueued = true));
    await waitFor("the adapter to retry against the stopped Redis", () => reconnects >= retriesBefore + 2);
    expect(enqueued).toBe(false);
    await startRedis(port);
    await duringOutage;
    for (const c of convs) await offer(c, "after");

    const total = [...expected.values()].reduce((s, ids) => s + ids.length, 0);
    await waitFor("every answer", () => ends.length >= total, 15_000);
    // No job left to run: any answer given twice has been given by now.
    await waitUntilQueueDrained({ url, prefix });
    expect(ends).toHaveLength(total);
    for (const c of convs) expect(ends.filter((e) => e.conv === c).map((e) => e.jobId)).toEqual(expected.get(c));
  });
});
