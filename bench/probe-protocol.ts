/** The messages between the benchmark and the probe preloaded into a role process (bench/process-probe.js). */

/**
 * Asks for a sample. `reset-peak` then starts a new window for the peak RSS and the loop
 * delay; `profile-start` starts the V8 CPU profiler, `profile-stop` writes its profile to `path`;
 * `gc` runs two full garbage collections first (when the process was started with --expose-gc).
 */
export interface ProbeRequest {
  id: number;
  type: "sample" | "reset-peak" | "profile-start" | "profile-stop" | "gc";
  path?: string;
}

/** A sample of the process (the window's figures are those before a reset-peak takes effect). */
export interface ProbeReply {
  id: number;
  /** process.cpuUsage() user + system, µs since the process started. */
  cpuMicros: number;
  /** The kernel's part of cpuMicros (system calls: sockets, files). */
  systemMicros: number;
  rssBytes: number;
  /** Highest sampled RSS in the window. */
  peakRssBytes: number;
  /** getrusage high-water mark since the process started. */
  maxRssBytes: number;
  /** Event-loop delay in the window (perf_hooks.monitorEventLoopDelay). */
  loopDelayP99Ms: number;
  loopDelayMaxMs: number;
  /** Only in the answer to `gc`: whether a collection ran, and the V8 heap after it (in use, committed). */
  gcRan?: boolean;
  heapUsedBytes?: number;
  heapTotalBytes?: number;
}
