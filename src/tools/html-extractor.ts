/**
 * HTML extraction (html-text.ts) in worker threads with a deadline and a memory cap: Readability can burn
 * seconds of CPU, which on the main thread would freeze every conversation. At the deadline the thread is
 * terminated and the body text, which the worker sends first, is used. Idle workers are kept a while for reuse.
 */
import { Worker } from "node:worker_threads";
import type { ExtractMessage, ExtractRequest } from "./html-extract-worker.js";
import { chooseText, type ExtractedText } from "./extracted-text.js";
import { ToolError } from "./tool-error.js";

/** Limits of an extractor. */
interface HtmlExtractorOptions {
  /** Time one page may take (from when a worker takes it) before the body text is used (default 5 s). */
  timeoutMs?: number;
  /** Pages extracted at once; more wait their turn (default 2). */
  poolSize?: number;
}

/** Time a new worker may take to load before extraction is declared unavailable. */
const STARTUP_MS = 15_000;
const IDLE_MS = 30_000;
const MAX_HEAP_MB = 256;
const tooComplex = () => new ToolError("the page is too large or complex to read");

/** Extracts title and readable text from HTML off the main thread. */
export interface HtmlExtractor {
  extract(html: string, options?: { signal?: AbortSignal }): Promise<ExtractedText>;
  /** Stops all workers; queued pages are rejected. */
  close(): Promise<void>;
}

interface Job {
  id: number;
  html: string;
  resolve: (v: ExtractedText) => void;
  reject: (e: Error) => void;
  signal?: AbortSignal;
  onAbort?: () => void;
  timer?: NodeJS.Timeout;
  body?: ExtractedText;
}

interface Slot {
  worker: Worker;
  /** Set once the worker has loaded its modules: deadlines measure extraction, not start-up. */
  ready: boolean;
  job?: Job;
  idle?: NodeJS.Timeout;
  startup?: NodeJS.Timeout;
}

/** Builds an extractor with its own small worker pool. */
export function createHtmlExtractor(options: HtmlExtractorOptions = {}): HtmlExtractor {
  const timeoutMs = options.timeoutMs ?? 5_000;
  const poolSize = Math.max(1, options.poolSize ?? 2);
  const slots: Slot[] = [];
  const queue: Job[] = [];
  let nextId = 1;

  const settle = (job: Job, result: ExtractedText | Error) => {
    clearTimeout(job.timer);
    if (job.onAbort) job.signal?.removeEventListener("abort", job.onAbort);
    if (result instanceof Error) job.reject(result);
    else job.resolve(result);
  };

  /** Stops a worker; its page (if any) gets the body text or `failure`. */
  const retire = (slot: Slot, failure: Error) => {
    const at = slots.indexOf(slot);
    if (at >= 0) slots.splice(at, 1);
    clearTimeout(slot.idle);
    clearTimeout(slot.startup);
    const job = slot.job;
    slot.job = undefined;
    if (job) settle(job, job.body ?? failure);
    void slot.worker.terminate();
    pump();
  };

  const spawn = () => {
    const slot: Slot = { worker: startWorker(), ready: false };
    // An idle worker must not keep the process alive; a waiting page's timers do.
    slot.worker.unref();
    slot.startup = setTimeout(() => {
      // A worker that cannot even load will not do better on a retry: fail what is waiting instead of looping.
      retire(slot, new ToolError("HTML extraction is unavailable"));
      for (const job of queue.splice(0)) settle(job, new ToolError("HTML extraction is unavailable"));
    }, STARTUP_MS);
    slot.worker.on("message", (m: ExtractMessage) => {
      if (m.kind === "ready") {
        slot.ready = true;
        clearTimeout(slot.startup);
        pump();
        return;
      }
      const job = slot.job;
      if (!job || m.id !== job.id) return;
      if (m.kind === "body") {
        job.body = { title: m.title, text: m.text, method: "body" };
        return;
      }
      const article =
        m.kind === "article" ? { title: m.title, text: m.text, method: "readability" as const } : undefined;
      slot.job = undefined;
      settle(job, chooseText(article, job.body ?? { title: null, text: "", method: "body" }));
      slot.idle = setTimeout(() => retire(slot, new ToolError("stopped")), IDLE_MS);
      slot.idle.unref();
      pump();
    });
    // Out of memory or crashed: whatever page it held falls back to the body text.
    for (const event of ["error", "exit"]) slot.worker.once(event, () => retire(slot, tooComplex()));
    slots.push(slot);
  };

  const pump = () => {
    while (queue.length > 0) {
      const slot = slots.find((s) => s.ready && !s.job);
      if (!slot) {
        // Start another worker only when none is already loading for the waiting pages.
        let loading = slots.filter((s) => !s.ready).length;
        while (loading < queue.length && slots.length < poolSize) {
          spawn();
          loading++;
        }
        return;
      }
      const job = queue.shift()!;
      clearTimeout(slot.idle);
      slot.job = job;
      job.timer = setTimeout(() => retire(slot, tooComplex()), timeoutMs);
      slot.worker.postMessage({ id: job.id, html: job.html } satisfies ExtractRequest);
    }
  };

  return {
    extract(html, { signal } = {}) {
      return new Promise<ExtractedText>((resolve, reject) => {
        if (signal?.aborted) return reject(new ToolError("aborted"));
        const job: Job = { id: nextId++, html, resolve, reject, signal };
        job.onAbort = () => {
          const waiting = queue.indexOf(job);
          if (waiting >= 0) queue.splice(waiting, 1);
          const slot = slots.find((s) => s.job === job);
          if (slot) {
            // Aborted mid-extraction: stop the CPU work too.
            slot.job = undefined;
            retire(slot, new ToolError("aborted"));
          }
          settle(job, new ToolError("aborted"));
        };
        signal?.addEventListener("abort", job.onAbort, { once: true });
        queue.push(job);
        pump();
      });
    },
    async close() {
      for (const job of queue.splice(0)) settle(job, new ToolError("extractor closed"));
      await Promise.all(
        slots.splice(0).map((slot) => {
          clearTimeout(slot.idle);
          clearTimeout(slot.startup);
          if (slot.job) settle(slot.job, slot.job.body ?? new ToolError("extractor closed"));
          slot.job = undefined;
          return slot.worker.terminate();
        }),
      );
    },
  };
}

/** Starts one worker; from TypeScript sources it registers tsx first, as a worker does not inherit the loader. */
function startWorker(): Worker {
  const self = import.meta.url;
  const resourceLimits = { maxOldGenerationSizeMb: MAX_HEAP_MB, maxYoungGenerationSizeMb: 32, stackSizeMb: 4 };
  if (!self.endsWith(".ts")) return new Worker(new URL("./html-extract-worker.js", self), { resourceLimits });
  const entry = new URL("./html-extract-worker.ts", self).href;
  const boot = `import("tsx/esm/api").then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(boot, { eval: true, resourceLimits });
}
