/**
 * A throwaway `redis-server` from PATH for one terminal chat session on a machine with no Redis: on a free
 * loopback port, data in a temporary directory, stopped (and the directory removed) when the session ends.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { redisAnswers } from "../redis/redis-answers.js";

/** A running private Redis. */
export interface PrivateRedisServer {
  url: string;
  port: number;
  stop(): Promise<void>;
}

/** There is no `redis-server` on PATH. */
export class RedisServerMissingError extends Error {
  override readonly name = "RedisServerMissingError";
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Starts redis-server from PATH; throws RedisServerMissingError when there is none, Error when it will not start. */
export async function startPrivateRedisServer(): Promise<PrivateRedisServer> {
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  const dir = mkdtempSync(join(tmpdir(), "chatbot-session-redis-"));
  // No snapshots, no AOF: the session's Redis is meant to vanish with the session.
  const args = [
    "--port",
    String(port),
    "--bind",
    "127.0.0.1",
    "--save",
    "",
    "--appendonly",
    "no",
    "--dir",
    dir,
    "--maxmemory-policy",
    "noeviction",
  ];
  const child: ChildProcess = spawn("redis-server", args, {
    stdio: "ignore",
    env: { PATH: process.env.PATH ?? "" },
  });
  let exited = false;
  const failure = new Promise<Error>((resolve) => {
    child.once("error", (error: NodeJS.ErrnoException) =>
      resolve(error.code === "ENOENT" ? new RedisServerMissingError("there is no redis-server on PATH") : error),
    );
    child.once("exit", (code) => {
      exited = true;
      resolve(new Error(`redis-server exited with code ${code}`));
    });
  });
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);
  const cleanup = () => {
    process.removeListener("exit", killOnExit);
    rmSync(dir, { recursive: true, force: true });
  };

  const deadline = Date.now() + 5000;
  const ready = (async () => {
    while (Date.now() < deadline && !exited) {
      // A refused connection while it starts is expected.
      if (await redisAnswers(url, 500)) return undefined;
      await sleep(50);
    }
    return new Error(`redis-server did not answer on port ${port}`);
  })();
  const error = await Promise.race([failure, ready]);
  if (error) {
    child.kill("SIGKILL");
    cleanup();
    throw error;
  }
  return {
    url,
    port,
    async stop() {
      if (!exited) {
        const gone = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGTERM");
        await gone;
      }
      cleanup();
    },
  };
}
