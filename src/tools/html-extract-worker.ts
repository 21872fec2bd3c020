/**
 * Worker-thread entry for HTML extraction (html-extractor.ts). It posts the cheap body text first, then
 * Readability's article, so the caller has an answer even if the deadline cuts Readability off.
 */
import { parentPort } from "node:worker_threads";
import { articleText, bodyText, parseDocument } from "./html-text.js";

/** A page to extract, sent by the main thread. */
export interface ExtractRequest {
  id: number;
  html: string;
}

/** What the worker posts: "ready" once loaded; per request, body then article or no-article. */
export type ExtractMessage =
  | { id: 0; kind: "ready" }
  | { id: number; kind: "body"; title: string | null; text: string }
  | { id: number; kind: "article"; title: string | null; text: string }
  | { id: number; kind: "no-article" };

parentPort?.on("message", ({ id, html }: ExtractRequest) => {
  const post = (m: ExtractMessage) => parentPort?.postMessage(m);
  const document = parseDocument(String(html));
  const body = bodyText(document);
  post({ id, kind: "body", title: body.title, text: body.text });
  let article: ReturnType<typeof articleText>;
  try {
    article = articleText(document);
  } catch {
    // Readability gives up on some malformed pages; the body text already sent stands.
  }
  post(article ? { id, kind: "article", title: article.title, text: article.text } : { id, kind: "no-article" });
});

parentPort?.postMessage({ id: 0, kind: "ready" } satisfies ExtractMessage);
