/**
 * The text of a PDF's first pages, up to a budget; a scanned, encrypted or broken PDF gets a clear refusal.
 * Read in a thread of its own (pdf-text-worker.ts) with a heap limit and a deadline: a 1 MB PDF whose page
 * inflated to 300 MB once froze the event loop for 100 s. Deadline, abort and crash all end the thread.
 */
import { Worker } from "node:worker_threads";
import { AttachmentError } from "../contracts/file-source.js";
import type { PdfAnswer, PdfJob } from "./pdf-text-worker.js";
import { fencedFile } from "./text-file.js";

/** How much of a PDF is read, and what reading it may cost. */
export interface PdfBudget {
  maxPages: number;
  maxChars: number;
  /** Time reading may take, from the worker's start (default 20 s). */
  timeoutMs?: number;
}

const MB = 1024 * 1024;
/** What one compressed stream, and all of them together, may inflate to. */
const MAX_STREAM_BYTES = 32 * MB;
const MAX_TOTAL_BYTES = 128 * MB;
const MAX_HEAP_MB = 256;

/** The fenced text of the PDF's first pages; rejects with AttachmentError("refused") when there is none. */
export async function pdfToText(
  name: string,
  bytes: Uint8Array,
  budget: PdfBudget,
  signal?: AbortSignal,
): Promise<string> {
  const answer = await readInWorker(name, bytes, budget, signal);
  if (answer.kind === "too-large")
    throw new AttachmentError(
      "refused",
      `${name} is too large to read (its content expands to more than ${Math.round(answer.limitBytes / MB)} MB)`,
    );
  if (answer.kind === "unreadable")
    throw new AttachmentError(
      "refused",
      `${name} could not be read (${answer.passwordProtected ? "it is password-protected" : "the file is damaged or not a PDF"})`,
    );
  const { pages, total } = answer;
  const text = pages
    .map((p) => p.trim())
    .filter(Boolean)
    .join("\n\n");
  if (text === "") throw new AttachmentError("refused", `${name} has no text I can read (a scanned PDF?)`);
  const block = fencedFile(name, text, budget.maxChars);
  return total > pages.length ? `${block}\n(only the first ${pages.length} of ${total} pages)` : block;
}

function readInWorker(name: string, bytes: Uint8Array, budget: PdfBudget, signal?: AbortSignal): Promise<PdfAnswer> {
  return new Promise<PdfAnswer>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason ?? new Error("aborted"));
    // pdf.js takes ownership of the buffer it is given: the worker gets a copy, moved rather than cloned.
    const copy = new Uint8Array(bytes);
    const job: PdfJob = {
      bytes: copy,
      maxPages: budget.maxPages,
      maxChars: budget.maxChars,
      maxStreamBytes: MAX_STREAM_BYTES,
      maxTotalBytes: MAX_TOTAL_BYTES,
    };
    const worker = startWorker(job);
    let settled = false;
    const finish = (outcome: PdfAnswer | Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      void worker.terminate();
      if (outcome instanceof Error) reject(outcome);
      else resolve(outcome);
    };
    const timer = setTimeout(
      () => finish(new AttachmentError("refused", `${name} took too long to read`)),
      budget.timeoutMs ?? 20_000,
    );
    const onAbort = () => finish(signal?.reason instanceof Error ? signal.reason : new Error("aborted"));
    signal?.addEventListener("abort", onAbort, { once: true });
    worker.once("message", (answer: PdfAnswer) => finish(answer));
    // Past its heap limit (ERR_WORKER_OUT_OF_MEMORY) or crashed.
    worker.once("error", () => finish(new AttachmentError("refused", `${name} is too large or complex to read`)));
    worker.once("exit", () => finish(new AttachmentError("refused", `${name} could not be read`)));
  });
}

/** Starts the reading thread; from TypeScript sources it registers tsx first, as a worker does not inherit the loader. */
function startWorker(job: PdfJob): Worker {
  const self = import.meta.url;
  const options = {
    workerData: job,
    transferList: [job.bytes.buffer as ArrayBuffer],
    resourceLimits: { maxOldGenerationSizeMb: MAX_HEAP_MB, maxYoungGenerationSizeMb: 32, stackSizeMb: 4 },
  };
  if (!self.endsWith(".ts")) return new Worker(new URL("./pdf-text-worker.js", self), options);
  const entry = new URL("./pdf-text-worker.ts", self).href;
  const boot = `import("tsx/esm/api").then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(boot, { ...options, eval: true });
}
