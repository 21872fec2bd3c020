/**
 * Worker-thread entry for PDF text (pdf-text.ts), one PDF per worker: it measures what the compressed streams
 * inflate to, then streams the first pages' text through pdf.js, stopping mid-page at the budget.
 */
import { inflateSync } from "node:zlib";
import { parentPort, workerData } from "node:worker_threads";

/** What the main thread hands the worker (the bytes are a copy it transferred). */
export interface PdfJob {
  bytes: Uint8Array;
  maxPages: number;
  maxChars: number;
  /** No one stream of page content may inflate past this many bytes. */
  maxStreamBytes: number;
  /** The streams together may not inflate past this many bytes. */
  maxTotalBytes: number;
}

/** The worker's one answer. */
export type PdfAnswer =
  | { kind: "text"; pages: string[]; total: number }
  | { kind: "too-large"; limitBytes: number }
  | { kind: "unreadable"; passwordProtected: boolean };

/** A stream that may be compressed in layers (`[/FlateDecode /FlateDecode]`): each layer is inflated in turn. */
const MAX_LAYERS = 3;
const STREAM = Buffer.from("stream");
const END_STREAM = Buffer.from("endstream");

/**
 * The size limit a stream breaks, or undefined when every zlib stream inflates within both. zlib stops at
 * `maxOutputLength`, so measuring costs at most that. Images are skipped: text extraction never decodes them.
 */
function inflatedSizeProblem(bytes: Buffer, maxStreamBytes: number, maxTotalBytes: number): number | undefined {
  let total = 0;
  let at = 0;
  for (;;) {
    const start = bytes.indexOf(STREAM, at);
    if (start < 0) return undefined;
    at = start + STREAM.length;
    // "stream" is followed by CRLF or LF; "endstream" is not a start.
    let body = at;
    if (bytes[body] === 0x0d) body++;
    if (bytes[body] !== 0x0a || (start >= 3 && bytes.subarray(start - 3, start).toString("latin1") === "end")) continue;
    body++;
    const end = bytes.indexOf(END_STREAM, body);
    if (end < 0) return undefined;
    at = end + END_STREAM.length;
    const dictionary = bytes.subarray(Math.max(0, start - 4096), start).toString("latin1");
    const own = dictionary.slice(dictionary.lastIndexOf(" obj") + 1);
    if (/\/Subtype\s*\/Image/.test(own)) continue;
    let data: Buffer = bytes.subarray(body, end);
    for (let layer = 0; layer < MAX_LAYERS && isZlib(data); layer++) {
      try {
        data = inflateSync(data, {
          maxOutputLength: maxStreamBytes,
          finishFlush: 2 /* Z_SYNC_FLUSH: tolerate a cut tail */,
        });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ERR_BUFFER_TOO_LARGE") return maxStreamBytes;
        break; // not really zlib, or damaged: pdf.js decides what it makes of it
      }
      total += data.length;
      if (total > maxTotalBytes) return maxTotalBytes;
    }
  }
}

/** A zlib header: deflate method, a window of at most 32 KB, a valid check value. */
function isZlib(data: Buffer): boolean {
  return data.length >= 2 && (data[0]! & 0x0f) === 8 && data[0]! >> 4 <= 7 && ((data[0]! << 8) | data[1]!) % 31 === 0;
}

async function extract(job: PdfJob): Promise<PdfAnswer> {
  const limit = inflatedSizeProblem(Buffer.from(job.bytes), job.maxStreamBytes, job.maxTotalBytes);
  if (limit !== undefined) return { kind: "too-large", limitBytes: limit };
  const { getDocumentProxy } = await import("unpdf");
  try {
    const doc = await getDocumentProxy(job.bytes, { isEvalSupported: false, stopAtErrors: false });
    const total = doc.numPages;
    const pages: string[] = [];
    let chars = 0;
    for (let i = 1; i <= Math.min(total, job.maxPages) && chars <= job.maxChars; i++) {
      const page = await doc.getPage(i);
      let text = "";
      // As a stream, item batches at a time: the budget stops a page of 200 million characters early.
      const reader = page.streamTextContent().getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        for (const item of value.items) if ("str" in item) text += item.str + (item.hasEOL ? "\n" : "");
        // No reader.cancel(): the main thread ends this worker, and pdf.js's work with it, on the answer.
        if (chars + text.length > job.maxChars) break;
      }
      pages.push(text);
      chars += text.length;
    }
    // No doc.destroy(): the main thread ends this worker as soon as the answer arrives.
    return { kind: "text", pages, total };
  } catch (error) {
    return { kind: "unreadable", passwordProtected: error instanceof Error && /password/i.test(error.message) };
  }
}

if (parentPort && workerData) {
  const port = parentPort;
  void extract(workerData as PdfJob).then((answer) => port.postMessage(answer));
}
