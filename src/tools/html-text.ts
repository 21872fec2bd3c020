/**
 * HTML to text a model can read: Readability's main article, else the body without scripts and page
 * chrome. Runs in the extraction worker (html-extractor.ts): Readability can take seconds of CPU.
 */
import { Readability } from "@mozilla/readability";
import { parseHTML } from "linkedom";
import { clean, type ExtractedText } from "./extracted-text.js";

/** The parts of a DOM node the text walk reads (linkedom nodes provide them). */
interface DomNode {
  nodeType: number;
  tagName?: string;
  textContent: string | null;
  childNodes: ArrayLike<DomNode>;
}

const SKIP = new Set("HEAD TITLE SCRIPT STYLE NOSCRIPT TEMPLATE SVG IFRAME CANVAS OBJECT BUTTON SELECT".split(" "));
/** Skipped only in the whole-body fallback: page chrome that Readability would have dropped. */
const CHROME = new Set(["NAV", "FOOTER", "ASIDE", "FORM", "HEADER"]);
const BLOCK = new Set(
  (
    "P DIV SECTION ARTICLE MAIN HEADER FOOTER ASIDE NAV H1 H2 H3 H4 H5 H6 LI UL OL DL DT DD TR TABLE " +
    "BLOCKQUOTE PRE BR HR FIGURE FIGCAPTION ADDRESS FORM"
  ).split(" "),
);

/** Parses HTML into a linkedom document. */
export function parseDocument(html: string): { title: string; body: unknown } & object {
  const document = parseHTML(html).document as unknown as { title: string; body: unknown; documentElement: unknown };
  // Text without a single element leaves no root, and linkedom's title and body getters throw then.
  if (!document.documentElement)
    return parseHTML(`<html><body>${html}</body></html>`).document as unknown as { title: string; body: unknown };
  return document;
}

/** The parts of a parsed document the body fallback reads. */
interface ParsedDocument {
  title?: string;
  body?: unknown;
  querySelector?(selector: string): { textContent: string | null } | null;
}

/**
 * The body's text without scripts and page chrome. A page without `<head>`/`<body>` leaves linkedom's
 * body empty with the text beside it: then the whole document's text is used.
 */
export function bodyText(document: ParsedDocument): ExtractedText {
  const body = document.body as DomNode | undefined;
  let text = body ? blockText(body, true) : "";
  if (text === "") text = blockText(document as unknown as DomNode, true);
  return { title: titleOf(document), text, method: "body" };
}

/** The document's title; linkedom's `title` getter throws on a document without an element (plain text). */
function titleOf(document: ParsedDocument): string | null {
  let title = "";
  try {
    title = String(document.title ?? "");
  } catch {
    title = "";
  }
  if (title.trim() === "") title = document.querySelector?.("title")?.textContent ?? "";
  return clean(title) || null;
}

/** The main article via Readability (mutates the document), or undefined when it finds none. */
export function articleText(document: object): ExtractedText | undefined {
  // The serializer hands back the content node itself, so block structure survives into the text.
  const article = new Readability(document as never, { serializer: (node: unknown) => node }).parse();
  if (!article?.content) return undefined;
  const text = blockText(article.content as DomNode, false);
  return { title: clean(article.title ?? "") || null, text, method: "readability" };
}

/** Text of a subtree with a line break around every block element and nothing from scripts or styles. */
function blockText(root: DomNode, skipChrome: boolean): string {
  const out: string[] = [];
  // An explicit stack instead of recursion: hostile pages can nest thousands of levels deep.
  const stack: (DomNode | "\n")[] = [root];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (node === "\n") {
      out.push("\n");
      continue;
    }
    if (node.nodeType === 3) {
      out.push(node.textContent ?? "");
      continue;
    }
    if (node.nodeType !== 1 && node.nodeType !== 9 && node.nodeType !== 11) continue;
    const tag = (node.tagName ?? "").toUpperCase();
    if (SKIP.has(tag) || (skipChrome && CHROME.has(tag))) continue;
    if (BLOCK.has(tag)) {
      out.push("\n");
      stack.push("\n");
    }
    const kids = node.childNodes;
    for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i]!);
  }
  return clean(out.join(""));
}
