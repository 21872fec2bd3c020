/**
 * The benchmark's Redis: the one at REDIS_URL (or the default) if it answers, or
 * a private `redis-server` from PATH (asked for with --private-redis, or when
 * nothing answers). Reads INFO commandstats for the "commands per job" figure and
 * deletes every key under the run's prefix at the end.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { freePort } from "../test/support/free-port.js";
import { redisAnswers } from "../src/redis/redis-answers.js";

/** Commands executed per command name (INFO commandstats `calls`). */
export type CommandCounts = Map<string, number>;

/** Commands seen by MONITOR: sent by clients (round trips, EVALSHA counted once) or run inside Lua scripts. */
export interface MonitorCounts {
  client: number;
  lua: number;
}

/** The Redis a run uses. */
export interface BenchRedis {
  url: string;
  /** True when this run started its own server (command counts are then the bot's alone). */
  private: boolean;
  /** Why a private server was started, when it was not asked for. */
  note?: string;
  commandCounts(): Promise<CommandCounts>;
  /** Starts MONITOR (costly: opt-in); afterwards `monitorCounts` tells round trips from script internals. */
  startMonitor(): Promise<void>;
  /** Running totals since startMonitor (undefined without it). */
  monitorCounts(): MonitorCounts | undefined;
  /** Deletes every key starting with `prefix`. */
  deletePrefix(prefix: string): Promise<number>;
  close(): Promise<void>;
}

async function startPrivateServer(): Promise<{ url: string; stop(): Promise<void> }> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "chatbot-bench-redis-"));
  const child: ChildProcess = spawn(
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir],
    {
      stdio: "ignore",
    },
  );
  const failed = new Promise<Error>((resolve) => child.once("error", resolve));
  const url = `redis://127.0.0.1:${port}`;
  for (let i = 0; i < 50; i++) {
    const error = await Promise.race([
      failed,
      new Promise<undefined>((resolve) => setTimeout(resolve, 100, undefined)),
    ]);
    if (error)
      throw new Error(
        `The benchmark needs Redis: redis-server could not be started (${error.message}). Start one or set REDIS_URL.`,
      );
    if (await redisAnswers(url)) {
      return {
        url,
        async stop() {
          const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
          child.kill("SIGTERM");
          await exited;
          rmSync(dir, { recursive: true, force: true });
        },
      };
    }
  }
  child.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
  throw new Error(`The benchmark needs Redis: a private redis-server on port ${port} did not answer.`);
}

/** Parses the `# Commandstats` section of INFO. */
export function parseCommandStats(info: string): CommandCounts {
  const counts: CommandCounts = new Map();
  for (const m of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) counts.set(m[1] as string, Number(m[2]));
  return counts;
}

/** Opens the run's Redis: `url` if it answers (unless `privateServer`), else a private server. */
export async function openBenchRedis(opts: { url: string; privateServer: boolean }): Promise<BenchRedis> {
  let server: { url: string; stop(): Promise<void> } | undefined;
  let note: string | undefined;
  if (opts.privateServer) server = await startPrivateServer();
  else if (!(await redisAnswers(opts.url))) {
    server = await startPrivateServer();
    note = `nothing answered at ${opts.url}`;
  }
  const url = server?.url ?? opts.url;
  const client = new Redis(url, { maxRetriesPerRequest: 3 });
  let monitor: Redis | undefined;
  let counts: MonitorCounts | undefined;
  return {
    url,
    private: server !== undefined,
    ...(note ? { note } : {}),
    async commandCounts() {
      return parseCommandStats(await client.info("commandstats"));
    },
    async startMonitor() {
      const running = await client.monitor();
      monitor = running;
      const seen: MonitorCounts = { client: 0, lua: 0 };
      counts = seen;
      running.on("monitor", (_time: string, args: string[], source: string) => {
        // The benchmark's own INFO readings are not the bot's.
        if ((args[0] ?? "").toLowerCase() === "info") return;
        if (source === "lua") seen.lua++;
        else seen.client++;
      });
    },
    monitorCounts() {
      return counts ? { ...counts } : undefined;
    },
    async deletePrefix(prefix) {
      let deleted = 0;
      let cursor = "0";
      do {
        const [next, keys] = await client.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
        cursor = next;
        if (keys.length > 0) deleted += await client.del(...keys);
      } while (cursor !== "0");
      return deleted;
    },
    async close() {
      monitor?.disconnect();
      client.disconnect();
      await server?.stop();
    },
  };
}

/** Commands executed between two readings, without the benchmark's own INFO calls. */
export function commandsBetween(
  before: CommandCounts,
  after: CommandCounts,
): { total: number; byCommand: [string, number][] } {
  const byCommand: [string, number][] = [];
  let total = 0;
  for (const [name, calls] of after) {
    if (name === "info") continue;
    const delta = calls - (before.get(name) ?? 0);
    if (delta > 0) {
      byCommand.push([name, delta]);
      total += delta;
    }
  }
  byCommand.sort((a, b) => b[1] - a[1]);
  return { total, byCommand };
}
