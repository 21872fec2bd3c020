/**
 * Makes sure the test run has a Redis: the one at REDIS_URL if it answers,
 * else a private `redis-server` from PATH on a free port, else a loud failure.
 * Tests read the URL with `inject("redisUrl")` and use their own key prefix.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { freePort } from "./free-port.js";
import { redisAnswers } from "../../src/redis/redis-answers.js";

declare module "vitest" {
  export interface ProvidedContext {
    redisUrl: string;
  }
}

let child: ChildProcess | undefined;
let dir: string | undefined;

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const wanted = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
  if (await redisAnswers(wanted)) {
    project.provide("redisUrl", wanted);
    return async () => undefined;
  }
  const port = await freePort();
  dir = mkdtempSync(join(tmpdir(), "chatbot-test-redis-"));
  child = spawn(
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir],
    {
      stdio: "ignore",
    },
  );
  const spawnError = new Promise<Error>((resolve) => child?.once("error", resolve));
  const url = `redis://127.0.0.1:${port}`;
  for (let i = 0; i < 50; i++) {
    const failed = await Promise.race([spawnError, new Promise<undefined>((r) => setTimeout(r, 100, undefined))]);
    if (failed) {
      throw new Error(
        `Tests need Redis: nothing answers at ${wanted} and redis-server could not be started (${failed.message}). ` +
          "Start one (apt-get install redis-server && redis-server --daemonize yes) or set REDIS_URL.",
      );
    }
    if (await redisAnswers(url)) break;
  }
  if (!(await redisAnswers(url)))
    throw new Error(`Tests need Redis: a private redis-server on port ${port} did not answer.`);
  project.provide("redisUrl", url);
  return async () => {
    child?.kill("SIGTERM");
    if (dir) rmSync(dir, { recursive: true, force: true });
  };
}
