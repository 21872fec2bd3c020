/**
 * How soon a job's processor starts (and so the chat's first sign of life: typing,
 * placeholder) when every Redis answer takes a while to arrive, as on a loaded Redis
 * or a Redis across the network: the worker's own checks before the run (head of the
 * conversation, finished already, earlier run alive, failures so far, journal, runner
 * claim, /stop marker) must share round trips instead of paying one each.
 */
import { createServer, connect, type Server, type Socket } from "node:net";
import { afterEach, beforeEach, expect, it } from "vitest";
import { createMessageQueue, type MessageQueue } from "../../src/queue/message-queue.js";
import { createMessageWorker, type MessageWorker } from "../../src/queue/message-worker.js";
import { createTestRedis, type TestRedis } from "../support/redis.js";
import { message, waitFor } from "./support/queue-test-kit.js";

/** Redis's answers reach the worker `delayMs` late (in order); what the worker sends goes through at once. */
async function slowAnswersRelay(target: URL, delayMs: number): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
  };
  const server: Server = createServer((inbound) => {
    const outbound = connect(Number(target.port || 6379), target.hostname);
    track(inbound);
    track(outbound);
    inbound.pipe(outbound);
    outbound.on("data", (chunk: Buffer) => {
      setTimeout(() => {
        if (!inbound.destroyed) inbound.write(chunk);
      }, delayMs);
    });
    inbound.on("close", () => outbound.destroy());
    outbound.on("close", () => inbound.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  const url = new URL(target.href);
  url.hostname = "127.0.0.1";
  url.port = String(port);
  return {
    url: url.href,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const DELAY_MS = 40;
let t: TestRedis;
let queue: MessageQueue;
let worker: MessageWorker | undefined;
let relay: { url: string; close(): Promise<void> } | undefined;

beforeEach(() => {
  t = createTestRedis("lat");
  queue = createMessageQueue({ connection: t.redis, prefix: t.prefix });
});
afterEach(async () => {
  await worker?.close({ graceMs: 0 });
  worker = undefined;
  await relay?.close();
  relay = undefined;
  await queue.close();
  await t.cleanup();
});

it("starts a new conversation's answer within a few Redis round trips of its arrival", async () => {
  relay = await slowAnswersRelay(new URL(t.url), DELAY_MS);
  const started = new Map<string, number>();
  worker = createMessageWorker({
    connection: relay.url,
    prefix: t.prefix,
    concurrency: 4,
    repairIntervalMs: 0,
    onGiveUp: async () => undefined,
    async process(m) {
      started.set(m.conversationKey, Date.now());
    },
  });
  await worker.ready();
  // The first job opens the /stop subscription and warms BullMQ up; the second shows the steady state.
  await queue.enqueue(message("warm", "1"));
  await waitFor("the warm-up answer", () => started.has("warm"));
  await new Promise((resolve) => setTimeout(resolve, 3 * DELAY_MS));

  const askedAt = Date.now();
  await queue.enqueue(message("new", "1"));
  await waitFor("the answer to start", () => started.get("new"));
  const trips = ((started.get("new") as number) - askedAt) / DELAY_MS;
  // BullMQ needs two (wake-up, moveToActive), the worker's own checks two more (measured 3.8); one trip each made it 9.3.
  expect(trips).toBeLessThan(6);
});
