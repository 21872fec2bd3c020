/**
 * A redis-server of the test's own on a free port, so a test can take Redis away
 * (SIGKILL) without disturbing the shared test Redis other suites use.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { freePort } from "./free-port.js";

/** A private Redis; `kill` takes it away, `restart` brings it back on the same port, `close` cleans up. */
export interface PrivateRedis {
  url: string;
  kill(): Promise<void>;
  restart(): Promise<void>;
  close(): Promise<void>;
}

async function answers(url: string): Promise<boolean> {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 500 });
  client.on("error", () => undefined);
  try {
    await client.connect();
    return (await client.ping()) === "PONG";
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

/** One redis-server process on `port`, resolved once it answers. */
async function launch(port: number, dir: string): Promise<{ kill(): Promise<void> }> {
  const child: ChildProcess = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir], {
    stdio: "ignore",
  });
  const exited = new Promise<void>((resolve) => {
    child.once("exit", () => resolve());
    child.once("error", () => resolve());
  });
  const kill = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await exited;
  };
  const url = `redis://127.0.0.1:${port}`;
  for (let i = 0; i < 50 && !(await answers(url)); i++) await new Promise((r) => setTimeout(r, 100));
  if (!(await answers(url))) {
    await kill();
    throw new Error(`a private redis-server on port ${port} did not answer (is redis-server on PATH?)`);
  }
  return { kill };
}

/** Starts redis-server (no persistence) on a free port and waits until it answers. */
export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "chatbot-ops-redis-"));
  let current: { kill(): Promise<void> } | undefined;
  try {
    current = await launch(port, dir);
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    kill: async () => current?.kill(),
    async restart() {
      await current?.kill();
      current = await launch(port, dir);
    },
    async close() {
      await current?.kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
