/**
 * Helpers for the queue tests: message factory, bounded polling, and worker
 * child processes (test/queue/worker-process.ts) that log what they do into Redis.
 */
import { vi } from "vitest";
import { type ChildProcess, spawn } from "node:child_process";
import type { Redis } from "ioredis";
import type { InboundMessage } from "../../../src/contracts/inbound-message.js";
import { inboundMessage } from "../../support/inbound-message.js";

/** A valid terminal message of conversation `ck`; `text` tells the test processors what to do. */
export function message(ck: string, messageId: string, text = "sleep:10"): InboundMessage {
  return inboundMessage({
    platform: "terminal",
    conversationKey: ck,
    chatId: ck.replace(/[^A-Za-z0-9]/g, "_"),
    messageId,
    author: { id: "u1", displayName: "Alice" },
    text,
  });
}

/** Polls `check` (vitest's `vi.waitFor`) until it returns a truthy value or `timeoutMs` passes (then throws with `what`). */
export function waitFor<T>(what: string, check: () => Promise<T> | T, timeoutMs = 8000): Promise<NonNullable<T>> {
  return vi.waitFor(
    async () => {
      const value = await check();
      if (!value) throw new Error(`timed out waiting for ${what}`);
      return value as NonNullable<T>;
    },
    { timeout: timeoutMs, interval: 20 },
  );
}

/** One line of the worker processes' log (see worker-process.ts). */
export interface WorkerEvent {
  kind: "ready" | "start" | "end" | "aborted" | "stopped" | "giveup" | "closed";
  pid: number;
  t: number;
  jobId?: string;
  conv?: string;
  attempt?: number;
  /** Message ids the journal held when the attempt started (start) or at the end (end). */
  messageIds?: string[];
  cancel?: string;
}

/** The events list the test processors write to. */
export function eventsKey(prefix: string): string {
  return `${prefix}:test:events`;
}

/** Reads every event logged so far under `prefix`. */
export async function readEvents(redis: Redis, prefix: string): Promise<WorkerEvent[]> {
  return (await redis.lrange(eventsKey(prefix), 0, -1)).map((line) => JSON.parse(line) as WorkerEvent);
}

/** Settings of one worker child process. */
export interface WorkerProcessConfig {
  url: string;
  prefix: string;
  concurrency: number;
  lockDurationMs?: number;
  stalledIntervalMs?: number;
  graceMs?: number;
  runningTtlMs?: number;
}

/** A running worker child. */
export interface WorkerChild {
  pid: number;
  child: ChildProcess;
  /** Resolves with the exit code (or the signal name). */
  exited: Promise<number | string>;
}

const children = new Set<ChildProcess>();

/** Spawns a worker process and resolves once it takes jobs (bounded). */
export async function spawnWorker(config: WorkerProcessConfig): Promise<WorkerChild> {
  const child = spawn(process.execPath, ["--import", "tsx", "test/queue/worker-process.ts", JSON.stringify(config)], {
    stdio: ["ignore", "pipe", "pipe"],
    cwd: process.cwd(),
  });
  children.add(child);
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const exited = new Promise<number | string>((resolve) => {
    child.once("exit", (code, signal) => {
      children.delete(child);
      resolve(code ?? signal ?? "unknown");
    });
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker process did not start: ${stderr}`)), 15_000);
    let out = "";
    child.stdout?.on("data", (d: Buffer) => {
      out += d.toString();
      if (out.includes("ready\n")) {
        clearTimeout(timer);
        resolve();
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`worker process exited (${code}) before it was ready: ${stderr}`));
    });
  });
  return { pid: child.pid as number, child, exited };
}

/** Kills every worker child still running (afterEach). */
export async function killWorkers(): Promise<void> {
  const waits = [...children].map((child) => {
    const gone = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    child.kill("SIGKILL");
    return gone;
  });
  await Promise.all(waits);
}
