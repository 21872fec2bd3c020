/**
 * A private `redis-server` for tests that stop and start Redis under the bot: its own free
 * port and temp dir, durable like a production set-up (appendonly yes, appendfsync always,
 * so every acknowledged write survives even SIGKILL), restarted on the same port and data.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { freePort } from "./tcp-relay.js";
import type { TestRedis } from "./redis.js";

/** A redis-server the test owns. */
export interface PrivateRedis {
  url: string;
  port: number;
  /** Starts (again) on the same port and data directory; resolves once it answers PING. */
  start(): Promise<void>;
  /** Stops it (SIGTERM: a clean shutdown; SIGKILL: a crash) and waits for the process to exit. */
  stop(signal?: "SIGTERM" | "SIGKILL"): Promise<void>;
  readonly running: boolean;
  /** The TestRedis shape startStack takes (`prefix` unique per call, a client that rides out restarts). */
  testRedis(prefix: string): TestRedis;
  /** Kills the server and deletes its directory. */
  close(): Promise<void>;
}

/** Creates (and starts) a private redis-server; `args` are appended to the durable defaults (later flags win). */
export async function startPrivateRedis(opts: { args?: string[] } = {}): Promise<PrivateRedis> {
  const dir = mkdtempSync(join(tmpdir(), "chatbot-faults-redis-"));
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;
  const clients: Redis[] = [];

  async function answers(timeoutMs: number): Promise<void> {
    const probe = new Redis(port, "127.0.0.1", { lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => 50 });
    probe.on("error", () => undefined);
    const deadline = Date.now() + timeoutMs;
    try {
      for (;;) {
        if ((await probe.ping().catch(() => "")) === "PONG") return;
        if (Date.now() > deadline)
          throw new Error(`private redis-server on ${port} did not answer within ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 30));
      }
    } finally {
      probe.disconnect();
    }
  }

  const redis: PrivateRedis = {
    url,
    port,
    get running() {
      return child !== undefined;
    },
    async start() {
      if (child) return;
      const args = [
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
        dir,
        ...(opts.args ?? []),
      ];
      const spawned = spawn("redis-server", args, { stdio: "ignore" });
      const failed = new Promise<Error>((resolve) => spawned.once("error", resolve));
      child = spawned;
      spawned.once("exit", () => {
        if (child === spawned) child = undefined;
      });
      const error = await Promise.race([failed, answers(5000).then(() => undefined)]);
      if (error) throw new Error(`redis-server could not be started: ${error.message}`);
    },
    async stop(signal = "SIGTERM") {
      const running = child;
      if (!running) return;
      const gone = new Promise((resolve) => running.once("exit", resolve));
      running.kill(signal);
      await gone;
      child = undefined;
    },
    testRedis(prefix) {
      const client = new Redis(url, { maxRetriesPerRequest: null, retryStrategy: () => 50 });
      client.on("error", () => undefined);
      clients.push(client);
      return { url, prefix, redis: client, cleanup: async () => client.disconnect() };
    },
    async close() {
      for (const c of clients) c.disconnect();
      await redis.stop("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await redis.start();
  return redis;
}
