/**
 * The text of a PDF from the chat (pdf.js through unpdf): the first pages, up to a budget. A PDF
 * that is scanned (no text layer), encrypted or broken gets a clear refusal instead.
 *
 * Reading runs in a worker thread of its own (pdf-text-worker.ts) with a heap limit and a deadline:
 * a 1 MB PDF whose page inflates to 300 MB froze a worker's event loop for 100 s and took 2 GB.
 * The deadline, the job's abort signal and a crash all end the thread, and with it the work.
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
  /** Heap limit of the reading thread (default 256 MB). */
  maxHeapMb?: number;
  /** What one compressed stream may inflate to (default 32 MB). */
  maxStreamBytes?: number;
  /** What all of them together may inflate to (default 128 MB). */
  maxTotalBytes?: number;
}

const MB = 1024 * 1024;

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
      maxStreamBytes: budget.maxStreamBytes ?? 32 * MB,
      maxTotalBytes: budget.maxTotalBytes ?? 128 * MB,
    };
    const worker = startWorker(job, budget.maxHeapMb ?? 256);
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

/**
 * Starts the reading thread. Built code runs the compiled `.js` sibling; from TypeScript sources
 * (tests, `tsx` runs) the worker registers tsx first, since a worker does not inherit the parent's loader.
 */
function startWorker(job: PdfJob, maxHeapMb: number): Worker {
  const self = import.meta.url;
  const options = {
    workerData: job,
    transferList: [job.bytes.buffer as ArrayBuffer],
    resourceLimits: { maxOldGenerationSizeMb: maxHeapMb, maxYoungGenerationSizeMb: 32, stackSizeMb: 4 },
  };
  if (!self.endsWith(".ts")) return new Worker(new URL("./pdf-text-worker.js", self), options);
  const entry = new URL("./pdf-text-worker.ts", self).href;
  const boot = `import("tsx/esm/api").then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(boot, { ...options, eval: true });
}
