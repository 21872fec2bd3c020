/** Tools for the loop tests: real Tool objects whose executions are recorded with start/end times. */
import { z } from "zod";
import { defineTool, type Tool } from "../../src/tools/tool.js";

/** One recorded execution. */
export interface Execution {
  name: string;
  args: unknown;
  start: number;
  end?: number;
  aborted?: boolean;
}

/** Waits `ms`, or rejects when the signal fires (a well-behaved tool). */
export function delay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    function onAbort(): void {
      clearTimeout(timer);
      reject(signal.reason);
    }
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** A weather tool that takes `ms` and reports a temperature per city. */
export function weatherTool(log: Execution[], temps: Record<string, number>, ms = 60): Tool {
  return defineTool({
    name: "get_weather",
    description: "Current weather for a city",
    schema: z.object({ city: z.string().min(1).describe("City name") }),
    async execute({ city }, { signal }) {
      const entry: Execution = { name: "get_weather", args: { city }, start: performance.now() };
      log.push(entry);
      try {
        await delay(ms, signal);
      } catch (error) {
        entry.aborted = true;
        throw error;
      }
      entry.end = performance.now();
      const t = temps[city];
      if (t === undefined) throw new Error(`no weather station for ${city}`);
      return { city, temperature_c: t, description: "sunny" };
    },
  });
}

/** A news tool returning fixed headlines. */
export function newsTool(log: Execution[], items: { title: string; link: string }[]): Tool {
  return defineTool({
    name: "get_news",
    description: "Latest headlines for a topic",
    schema: z.object({ topic: z.string() }),
    async execute({ topic }) {
      log.push({ name: "get_news", args: { topic }, start: performance.now(), end: performance.now() });
      return items.map((i) => ({ ...i, published: "2025-06-03T08:00:00Z", source: "Example News" }));
    },
  });
}

/** A read_url tool returning a page body per URL. */
export function readUrlTool(log: Execution[], pages: Record<string, string>): Tool {
  return defineTool({
    name: "read_url",
    description: "Read a web page",
    schema: z.object({ url: z.string().url() }),
    async execute({ url }) {
      log.push({ name: "read_url", args: { url }, start: performance.now(), end: performance.now() });
      const text = pages[url];
      if (text === undefined) throw new Error(`HTTP 404 for ${url}`);
      return { title: "Story", text };
    },
  });
}

/** A tool that never settles and ignores its signal (the runner must still cut it off). */
export function hangingTool(): Tool {
  return defineTool({
    name: "hang",
    description: "Never returns",
    schema: z.object({}),
    timeoutMs: 80,
    execute: () => new Promise<never>(() => undefined),
  });
}

/** A tool that throws. */
export function throwingTool(): Tool {
  return defineTool({
    name: "explode",
    description: "Always fails",
    schema: z.object({}),
    async execute() {
      throw new Error("backend returned HTTP 502");
    },
  });
}
