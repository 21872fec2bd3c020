/**
 * The text of a PDF from the chat (pdf.js through unpdf): the first pages, up to a budget. A PDF
 * that is scanned (no text layer), encrypted or broken gets a clear refusal instead.
 */
import { AttachmentError } from "../contracts/file-source.js";
import { fencedFile } from "./text-file.js";

/** How much of a PDF is read. */
export interface PdfBudget {
  maxPages: number;
  maxChars: number;
}

/** The fenced text of the PDF's first pages; rejects with AttachmentError("refused") when there is none. */
export async function pdfToText(name: string, bytes: Uint8Array, budget: PdfBudget): Promise<string> {
  // Loaded on the first PDF (unpdf then loads pdf.js): most workers never see one.
  const { getDocumentProxy } = await import("unpdf");
  let pages: string[];
  let total: number;
  try {
    // pdf.js takes ownership of the buffer it is given: hand it a copy.
    const doc = await getDocumentProxy(new Uint8Array(bytes), { isEvalSupported: false, stopAtErrors: false });
    total = doc.numPages;
    pages = [];
    try {
      // Page by page, stopping at the budget: a thousand-page PDF costs no more than its first pages.
      let chars = 0;
      for (let i = 1; i <= Math.min(total, budget.maxPages) && chars <= budget.maxChars; i++) {
        const content = await (await doc.getPage(i)).getTextContent();
        const page = content.items.map((item) => ("str" in item ? item.str + (item.hasEOL ? "\n" : "") : "")).join("");
        pages.push(page);
        chars += page.length;
      }
    } finally {
      await doc.destroy();
    }
  } catch (error) {
    const why =
      error instanceof Error && /password/i.test(error.message)
        ? "it is password-protected"
        : "the file is damaged or not a PDF";
    throw new AttachmentError("refused", `${name} could not be read (${why})`);
  }
  const text = pages
    .map((p) => p.trim())
    .filter(Boolean)
    .join("\n\n");
  if (text === "") throw new AttachmentError("refused", `${name} has no text I can read (a scanned PDF?)`);
  const block = fencedFile(name, text, budget.maxChars);
  return total > pages.length ? `${block}\n(only the first ${pages.length} of ${total} pages)` : block;
}
