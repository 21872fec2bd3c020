/**
 * A bot role as its own process, exactly as deployed (`src/main.ts worker|bots`
 * through tsx, configured only by its environment), with the probe preloaded so
 * the benchmark can read its CPU time and memory, and its JSON log lines parsed.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { ProbeReply, ProbeRequest } from "./probe-protocol.js";
import { devNull } from "node:os";

/** How role processes are started: the built JS (as deployed) or src/ through tsx. */
export interface RoleEntry {
  /** Node arguments before the role name. */
  args: string[];
  label: string;
  /** The directory holding the bot's code as run (src/, dist/ or the build), for profiles. */
  codeRoot: string;
  /** Why this form was chosen, when it is not the deployed one. */
  note?: string;
  /** `auto` fell back to tsx because dist/ is missing or older than src/ (the figures are not the deployed form's). */
  stale?: boolean;
}

const PROBE = pathToFileURL(fileURLToPath(new URL("./process-probe.js", import.meta.url))).href;

/** Newest modification time of the non-test sources under `dir`. */
function newestSource(dir: string): number {
  let newest = 0;
  for (const name of readdirSync(dir, { recursive: true }) as string[]) {
    if (!name.endsWith(".ts") || name.endsWith(".test.ts")) continue;
    newest = Math.max(newest, statSync(join(dir, name)).mtimeMs);
  }
  return newest;
}

/**
 * Picks the role entry: `auto` runs dist/main.js when `npm run build` is newer than every
 * source (the deployed form), else src/main.ts through tsx; `tsx` forces the latter; any
 * other value is a directory holding a build's main.js.
 */
export function roleEntry(repoRoot: string, choice: string): RoleEntry {
  const tsx: RoleEntry = {
    args: ["--import", "tsx", "--import", PROBE, "src/main.ts"],
    label: "src/main.ts through tsx",
    codeRoot: join(repoRoot, "src"),
  };
  if (choice === "tsx") return { ...tsx, note: "tsx's loader adds about 30 MB to each process' RSS" };
  const dir = choice === "auto" ? join(repoRoot, "dist") : resolve(choice);
  const main = join(dir, "main.js");
  if (choice !== "auto") {
    if (!existsSync(main)) throw new Error(`--roles ${choice}: no main.js there`);
    return { args: ["--import", PROBE, main], label: `${main} (built)`, codeRoot: dir };
  }
  if (existsSync(main) && statSync(main).mtimeMs >= newestSource(join(repoRoot, "src"))) {
    return { args: ["--import", PROBE, "dist/main.js"], label: "dist/main.js (as deployed)", codeRoot: dir };
  }
  return {
    ...tsx,
    stale: true,
    note: "dist/ is missing or older than src/, so not the deployed form; tsx's loader adds about 30 MB to each process' RSS",
  };
}

/** A JSON log line of the process (pino). */
export type LogLine = Record<string, unknown>;

/** A running role process. */
export interface RoleProcess {
  readonly role: string;
  readonly pid: number;
  /** CPU and memory now; `resetPeak` starts a new peak-RSS window. */
  sample(resetPeak?: boolean): Promise<ProbeReply>;
  /** Runs two full GCs in the process (it is started with --expose-gc), then samples it. */
  collectGarbage(): Promise<ProbeReply>;
  /** Starts the V8 CPU profiler in the process. */
  startProfile(): Promise<void>;
  /** Stops it and writes the profile (.cpuprofile JSON) to `path`. */
  stopProfile(path: string): Promise<void>;
  /** Calls `listener` with every JSON log line from now on; returns the unsubscribe. */
  onLog(listener: (line: LogLine) => void): () => void;
  /** Log lines at warn or above so far. */
  readonly warnings: number;
  /** The last lines of output, for diagnostics. */
  tail(): string;
  /** SIGTERM (graceful shutdown), SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

/** Spawns the role in `repoRoot` (with `extraNodeArgs` before the entry); resolves once it logged "started". */
export async function startRoleProcess(
  role: "worker" | "bots",
  env: Record<string, string>,
  opts: { repoRoot: string; entry: RoleEntry; extraNodeArgs?: string[]; startTimeoutMs?: number },
): Promise<RoleProcess> {
  // --expose-gc only lets the probe collect garbage before the idle sample; nothing else calls it.
  const child: ChildProcess = spawn(
    process.execPath,
    ["--expose-gc", ...(opts.extraNodeArgs ?? []), ...opts.entry.args, role],
    {
      cwd: opts.repoRoot,
      // ENV_FILE: a developer's ./.env must not change what the benchmark measures.
      env: { PATH: process.env.PATH ?? "", HTTP_PORT: "0", LOG_LEVEL: "info", ENV_FILE: devNull, ...env },
      stdio: ["ignore", "pipe", "pipe", "ipc"],
    },
  );
  const recent: string[] = [];
  const remember = (line: string) => {
    recent.push(line.length > 400 ? `${line.slice(0, 400)}…` : line);
    if (recent.length > 40) recent.shift();
  };
  const listeners = new Set<(line: LogLine) => void>();
  let warnings = 0;
  let started = false;
  let markStarted: () => void = () => undefined;
  const startedPromise = new Promise<void>((resolve) => (markStarted = resolve));

  // pino writes to stderr; anything on stdout is kept for diagnostics too.
  const onLine = (text: string) => {
    remember(text);
    if (!text.startsWith("{")) return;
    let line: LogLine;
    try {
      line = JSON.parse(text) as LogLine;
    } catch {
      return;
    }
    if (typeof line.level === "number" && line.level >= 40) warnings++;
    if (!started && line.msg === "started") {
      started = true;
      markStarted();
    }
    for (const listener of listeners) listener(line);
  };
  createInterface({ input: child.stdout! }).on("line", onLine);
  createInterface({ input: child.stderr! }).on("line", onLine);

  const exited = new Promise<string>((resolve) =>
    child.once("exit", (code, signal) => resolve(String(code ?? signal))),
  );
  const timeoutMs = opts.startTimeoutMs ?? 30_000;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const outcome = await Promise.race([
    startedPromise.then(() => "started"),
    exited.then((code) => `exited with ${code}`),
    new Promise<string>(
      (resolve) => (timer = setTimeout(() => resolve(`did not start within ${timeoutMs} ms`), timeoutMs)),
    ),
  ]);
  clearTimeout(timer);
  if (outcome !== "started") {
    child.kill("SIGKILL");
    throw new Error(`${role} process ${outcome}:\n${recent.join("\n")}`);
  }

  let nextId = 1;
  const waiting = new Map<number, (reply: ProbeReply) => void>();
  child.on("message", (raw: unknown) => {
    const reply = raw as ProbeReply;
    waiting.get(reply.id)?.(reply);
    waiting.delete(reply.id);
  });

  const ask = (type: ProbeRequest["type"], path?: string): Promise<ProbeReply> => {
    const id = nextId++;
    const request: ProbeRequest = { id, type, ...(path ? { path } : {}) };
    // Writing a profile of a busy minute takes a while on a loaded machine.
    const patienceMs = type === "profile-stop" ? 60_000 : 10_000;
    return new Promise<ProbeReply>((resolve, reject) => {
      const timeout = setTimeout(() => {
        waiting.delete(id);
        reject(new Error(`${role} process did not answer the probe (is it alive?)\n${recent.join("\n")}`));
      }, patienceMs);
      waiting.set(id, (reply) => {
        clearTimeout(timeout);
        resolve(reply);
      });
      child.send(request);
    });
  };

  return {
    role,
    pid: child.pid ?? -1,
    sample: (resetPeak = false) => ask(resetPeak ? "reset-peak" : "sample"),
    collectGarbage: () => ask("gc"),
    startProfile: async () => void (await ask("profile-start")),
    stopProfile: async (path) => void (await ask("profile-stop", path)),
    onLog(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    get warnings() {
      return warnings;
    },
    tail: () => recent.join("\n"),
    async stop(graceMs = 10_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      let kill: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([exited, new Promise<void>((resolve) => (kill = setTimeout(resolve, graceMs)))]);
      clearTimeout(kill);
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGKILL");
        await exited;
      }
    },
  };
}
