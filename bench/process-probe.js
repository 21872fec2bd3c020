/**
 * Preloaded into a role process by the benchmark (`node --import bench/process-probe.js
 * dist/main.js worker`, or after `--import tsx` for src/main.ts): answers CPU, memory and
 * event-loop samples over the IPC channel, and records CPU profiles of chosen windows, so
 * the benchmark measures the process itself without a hook in src/. Plain JavaScript
 * because it must load into a plain `node` (the deployed form) without tsx, whose loader
 * alone adds ~30 MB of RSS. The messages are typed in probe-protocol.ts. Resident memory
 * is sampled every 100 ms; `reset-peak` starts a new window for the peak and the
 * event-loop delay; `gc` runs full collections first (the benchmark starts role processes
 * with --expose-gc for it) and adds the V8 heap committed and in use. Without an IPC channel
 * it does nothing.
 */
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector";
import { monitorEventLoopDelay } from "node:perf_hooks";

if (process.send) {
  let peakRss = 0;
  const sampleRss = () => {
    const rss = process.memoryUsage.rss();
    if (rss > peakRss) peakRss = rss;
  };
  sampleRss();
  // Sampling must never keep the process alive on its own.
  setInterval(sampleRss, 100).unref();
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  loopDelay.enable();
  /** @type {Session | undefined} */
  let profiler;

  const sample = (id) => {
    sampleRss();
    const cpu = process.cpuUsage();
    return {
      id,
      cpuMicros: cpu.user + cpu.system,
      systemMicros: cpu.system,
      rssBytes: process.memoryUsage.rss(),
      peakRssBytes: peakRss,
      maxRssBytes: process.resourceUsage().maxRSS * 1024,
      loopDelayP99Ms: loopDelay.percentile(99) / 1e6,
      loopDelayMaxMs: loopDelay.max / 1e6,
    };
  };

  process.on("message", (request) => {
    if (!request || typeof request !== "object" || typeof request.id !== "number") return;
    if (request.type === "gc") {
      const collect = typeof globalThis.gc === "function" ? globalThis.gc : undefined;
      // Twice, with a turn of the loop between: the first collection only queues weak-reference and
      // finalizer callbacks, and what they drop is freed by the second.
      collect?.();
      setImmediate(() => {
        collect?.();
        const memory = process.memoryUsage();
        process.send?.({
          ...sample(request.id),
          gcRan: collect !== undefined,
          heapUsedBytes: memory.heapUsed,
          heapTotalBytes: memory.heapTotal,
        });
      });
      return;
    }
    const reply = sample(request.id);
    switch (request.type) {
      case "reset-peak":
        peakRss = 0;
        loopDelay.reset();
        process.send?.(reply);
        return;
      case "profile-start":
        profiler = new Session();
        profiler.connect();
        profiler.post("Profiler.enable", () => profiler?.post("Profiler.start", () => process.send?.(reply)));
        return;
      case "profile-stop": {
        const session = profiler;
        profiler = undefined;
        if (!session) return process.send?.(reply);
        session.post("Profiler.stop", (error, result) => {
          if (!error && typeof request.path === "string") writeFileSync(request.path, JSON.stringify(result.profile));
          session.disconnect();
          process.send?.(reply);
        });
        return;
      }
      default:
        process.send?.(reply);
    }
  });
  process.channel?.unref();
}
