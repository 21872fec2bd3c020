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
import { waitUntilQueueDrained } from "../support/queue-drained.js";

/** Redis's answers reach the worker `delayMs` late (in order); what the worker sends goes through at once. */
async function slowAnswersRelay(target: URL, delayMs: number): Promise<Relay> {
  const sockets = new Set<Socket>();
  const outbounds = new Set<Socket>();
  let inFlight = 0;
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
  };
  const server: Server = createServer((inbound) => {
    const outbound = connect(Number(target.port || 6379), target.hostname);
    outbounds.add(outbound);
    outbound.on("close", () => outbounds.delete(outbound));
    track(inbound);
    track(outbound);
    inbound.pipe(outbound);
    outbound.on("data", (chunk: Buffer) => {
      inFlight++;
      setTimeout(() => {
        inFlight--;
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
    localPorts: () => new Set([...outbounds].map((socket) => socket.localPort)),
    answersInFlight: () => inFlight,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The relay's address for the worker, and the local ports of its connections to Redis (as CLIENT LIST shows them). */
interface Relay {
  url: string;
  localPorts(): Set<number | undefined>;
  /** Redis answers held back on their way to the worker. */
  answersInFlight(): number;
  close(): Promise<void>;
}

/**
 * True once one of the relay's connections is blocked in BullMQ's wait for the next job (BZPOPMIN) and no answer
 * is on its way to the worker: the worker is idle.
 */
async function workerWaitsForJobs(redis: TestRedis["redis"], relay: Relay): Promise<boolean> {
  if (relay.answersInFlight() > 0) return false;
  const ports = relay.localPorts();
  const clients = String(await redis.client("LIST")).split("\n");
  const blocked = clients.some((line) => {
    const port = Number(/ addr=[^ ]*:(\d+) /.exec(` ${line}`)?.[1]);
    return ports.has(port) && / cmd=bzpopmin /.test(` ${line} `) && / flags=\S*b/.test(` ${line}`);
  });
  return blocked && relay.answersInFlight() === 0;
}

const DELAY_MS = 40;
let t: TestRedis;
let queue: MessageQueue;
let worker: MessageWorker | undefined;
let relay: Relay | undefined;

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
  // Steady state: the warm-up job finished and the worker waits for the next one.
  await waitUntilQueueDrained(t);
  const idle = relay;
  await waitFor("the worker to wait for jobs", () => workerWaitsForJobs(t.redis, idle));

  const askedAt = Date.now();
  await queue.enqueue(message("new", "1"));
  await waitFor("the answer to start", () => started.get("new"));
  const trips = ((started.get("new") as number) - askedAt) / DELAY_MS;
  // BullMQ needs two (wake-up, moveToActive), the worker's own checks two more (measured 3.8); one trip each made it 9.3.
  expect(trips).toBeLessThan(6);
});
