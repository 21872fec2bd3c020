/**
 * Hostile PDFs (issue 36): a 300 KB file whose one page inflates to 300 MB is refused in one clear
 * line, quickly, with memory and the event loop untouched; a text page far over the budget stops
 * mid-page; the deadline and the job's abort signal end the reading thread.
 */
import { monitorEventLoopDelay } from "node:perf_hooks";
import { beforeAll, describe, expect, it } from "vitest";
import { AttachmentError } from "../../src/contracts/file-source.js";
import { pdfToText } from "../../src/attachments/pdf-text.js";
import { deflatedRepeat, flatePagePdf, onePagePdf } from "../support/test-images.js";

const MB = 1024 * 1024;
const TEXT_OBJECT = "BT /F1 12 Tf 50 750 Td (ABCDEFGHIJKLMNOPQRSTUVWXYZ) Tj ET\n";
/** Two lines of text, down and back up: a page of many lines that all stay on the page. */
const TEXT_LINE = "(ABCDEFGHIJKLMNOPQRSTUVWXYZ) Tj 0 -14 Td (abcdefghijklmnopqrstuvwxyz) Tj 0 14 Td\n";
const budget = { maxPages: 20, maxChars: 8000 };

let bomb: Buffer;
let longPage: Buffer;
beforeAll(async () => {
  // 300 MB of text operators on one page, about 300 KB on the wire.
  bomb = flatePagePdf(await deflatedRepeat(TEXT_OBJECT, Math.ceil((300 * MB) / TEXT_OBJECT.length)));
  // 6 MB of text on one page: under the inflate caps, far over the 8,000-character budget.
  longPage = flatePagePdf(
    await deflatedRepeat(TEXT_LINE, Math.ceil((6 * MB) / TEXT_LINE.length), "BT /F1 12 Tf 50 750 Td\n"),
  );
}, 60_000);

/** Runs `work` while sampling the process's RSS and the event loop's delay. */
async function measured<T>(
  work: () => Promise<T>,
): Promise<{ outcome: T | Error; ms: number; rssGrowthMb: number; maxDelayMs: number }> {
  const delay = monitorEventLoopDelay({ resolution: 10 });
  const before = process.memoryUsage().rss;
  let peak = before;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 10);
  delay.enable();
  const started = performance.now();
  const outcome = await work().catch((error: Error) => error);
  const ms = performance.now() - started;
  delay.disable();
  clearInterval(sampler);
  return { outcome, ms, rssGrowthMb: (peak - before) / MB, maxDelayMs: delay.max / 1e6 };
}

describe("PDF text", () => {
  it("still reads an ordinary PDF", async () => {
    expect(await pdfToText("invoice.pdf", onePagePdf("Invoice total: 99 euros"), budget)).toBe(
      "File invoice.pdf:\n```\nInvoice total: 99 euros\n```",
    );
  });

  it("a page that inflates to 300 MB is refused in one line within seconds; memory and the event loop stay calm", async () => {
    expect(bomb.length).toBeLessThan(2 * MB);
    const { outcome, ms, rssGrowthMb, maxDelayMs } = await measured(() => pdfToText("bomb.pdf", bomb, budget));
    expect(outcome).toBeInstanceOf(AttachmentError);
    expect((outcome as Error).message).toBe("bomb.pdf is too large to read (its content expands to more than 32 MB)");
    // It took 100 s (and the test's 8 s on an idle machine); the bound leaves room for a busy CI.
    expect(ms).toBeLessThan(15_000);
    // It was 2 GB; the check inflates at most one 32 MB stream.
    expect(rssGrowthMb).toBeLessThan(250);
    // Other chats on this worker are not held up: the event loop never stalls.
    expect(maxDelayMs).toBeLessThan(500);
  });

  it("two bombs at once are both refused, as quickly", async () => {
    const { outcome, ms } = await measured(() =>
      Promise.allSettled([pdfToText("a.pdf", bomb, budget), pdfToText("b.pdf", bomb, budget)]),
    );
    const results = outcome as PromiseSettledResult<string>[];
    expect(results.map((r) => (r.status === "rejected" ? (r.reason as Error).message : r.value))).toEqual([
      "a.pdf is too large to read (its content expands to more than 32 MB)",
      "b.pdf is too large to read (its content expands to more than 32 MB)",
    ]);
    expect(ms).toBeLessThan(20_000);
  });

  it("the character budget stops reading in the middle of a page", async () => {
    const { outcome, ms, maxDelayMs } = await measured(() => pdfToText("long.pdf", longPage, budget));
    expect(typeof outcome).toBe("string");
    const text = outcome as string;
    expect(text.startsWith("File long.pdf:\n```\nABCDEFGHIJKLMNOPQRSTUVWXYZ\nabcdefghijklmnopqrstuvwxyz\n")).toBe(true);
    expect(text.length).toBeLessThan(8_200);
    expect(maxDelayMs).toBeLessThan(500);
    // Reading the whole page (what happened before: the budget was checked after each page) takes
    // more than twice as long on the same machine, however busy it is: given twice the time, it is cut off.
    const whole = await measured(() =>
      pdfToText("long.pdf", longPage, {
        maxPages: 1,
        maxChars: Number.MAX_SAFE_INTEGER,
        timeoutMs: Math.max(1_000, Math.round(ms * 2)),
      }),
    );
    expect((whole.outcome as Error).message).toBe("long.pdf took too long to read");
  }, 120_000);

  it("the deadline ends the reading thread with one clear line", async () => {
    const { outcome, ms } = await measured(() =>
      pdfToText("slow.pdf", longPage, { maxPages: 20, maxChars: Number.MAX_SAFE_INTEGER, timeoutMs: 400 }),
    );
    expect((outcome as Error).message).toBe("slow.pdf took too long to read");
    expect(ms).toBeLessThan(2_000);
  });

  it("the job's abort signal stops reading at once", async () => {
    const controller = new AbortController();
    const reading = pdfToText(
      "slow.pdf",
      longPage,
      { maxPages: 20, maxChars: Number.MAX_SAFE_INTEGER, timeoutMs: 60_000 },
      controller.signal,
    ).catch((error: Error) => error);
    setTimeout(() => controller.abort(new Error("job cancelled")), 300);
    const started = performance.now();
    expect(((await reading) as Error).message).toBe("job cancelled");
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});
