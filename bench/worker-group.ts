/**
 * `--workers N`: N worker processes sharing the Redis, seen by the waves as one worker.
 * CPU time adds up over the processes (it is the CPU the deployment spends); memory and
 * event-loop delay are per process, so the group reports the highest process' figure
 * (the RSS targets are per worker process). Log lines of every process reach the listeners.
 */
import { basename, dirname, join } from "node:path";
import type { ProbeReply } from "./probe-protocol.js";
import type { LogLine, RoleProcess } from "./role-process.js";

/** One sample of every process folded into one: CPU summed, memory and loop delay the highest process'. */
export function combineSamples(replies: readonly ProbeReply[]): ProbeReply {
  const first = replies[0];
  if (!first) throw new Error("no worker process to sample");
  if (replies.length === 1) return first;
  const sum = (pick: (r: ProbeReply) => number) => replies.reduce((total, r) => total + pick(r), 0);
  const max = (pick: (r: ProbeReply) => number) => Math.max(...replies.map(pick));
  const heaps = replies.every((r) => r.heapUsedBytes !== undefined && r.heapTotalBytes !== undefined);
  return {
    id: first.id,
    cpuMicros: sum((r) => r.cpuMicros),
    systemMicros: sum((r) => r.systemMicros),
    rssBytes: max((r) => r.rssBytes),
    peakRssBytes: max((r) => r.peakRssBytes),
    maxRssBytes: max((r) => r.maxRssBytes),
    loopDelayP99Ms: max((r) => r.loopDelayP99Ms),
    loopDelayMaxMs: max((r) => r.loopDelayMaxMs),
    ...(first.gcRan !== undefined ? { gcRan: replies.every((r) => r.gcRan === true) } : {}),
    ...(heaps
      ? { heapUsedBytes: max((r) => r.heapUsedBytes ?? 0), heapTotalBytes: max((r) => r.heapTotalBytes ?? 0) }
      : {}),
  };
}

/** Where worker `index` (0-based) writes its profile when the first one writes `path`. */
export function profilePathOf(path: string, index: number): string {
  if (index === 0) return path;
  const name = basename(path);
  const dot = name.lastIndexOf(".");
  const numbered = dot > 0 ? `${name.slice(0, dot)}-w${index + 1}${name.slice(dot)}` : `${name}-w${index + 1}`;
  return join(dirname(path), numbered);
}

/** The processes as one RoleProcess; with one process it is that process. */
export function workerGroup(processes: readonly RoleProcess[]): RoleProcess {
  const [first] = processes;
  if (!first) throw new Error("a worker group needs at least one process");
  if (processes.length === 1) return first;
  const all = <T>(each: (p: RoleProcess, index: number) => Promise<T>) => Promise.all(processes.map(each));
  return {
    role: `worker ×${processes.length}`,
    pid: first.pid,
    sample: async (resetPeak) => combineSamples(await all((p) => p.sample(resetPeak))),
    collectGarbage: async () => combineSamples(await all((p) => p.collectGarbage())),
    startProfile: async () => void (await all((p) => p.startProfile())),
    // The first process' profile lands at `path` (the summary reads it); the others beside it, numbered.
    stopProfile: async (path) => void (await all((p, index) => p.stopProfile(profilePathOf(path, index)))),
    onLog(listener: (line: LogLine) => void) {
      const unsubscribes = processes.map((p) => p.onLog(listener));
      return () => {
        for (const unsubscribe of unsubscribes) unsubscribe();
      };
    },
    get warnings() {
      return processes.reduce((sum, p) => sum + p.warnings, 0);
    },
    tail: () => processes.map((p) => `--- worker pid ${p.pid}\n${p.tail()}`).join("\n"),
    stop: async (graceMs) => void (await all((p) => p.stop(graceMs))),
  };
}
