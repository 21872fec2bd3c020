/**
 * read_url: a web page through the SSRF guard (safe-fetch.ts), as its title and main text (Readability in a
 * worker, else the body text) cut to a budget. Plain text and JSON come back trimmed; other types are refused.
 */
import { z } from "zod";
import { createHtmlExtractor, type HtmlExtractor } from "./html-extractor.js";
import { clean } from "./extracted-text.js";
import { createSafeFetch, type SafeFetchOptions } from "./safe-fetch.js";
import { defineTool, type Tool } from "./tool.js";
import { ToolError } from "./tool-error.js";

/** Dependencies of read_url: the guard's options and the text budget. */
export interface ReadUrlDeps extends SafeFetchOptions {
  /** Characters of text returned at most (default 6000). */
  maxChars?: number;
  /** A shared extractor (its workers are reused); by default the tool makes its own. */
  extractor?: HtmlExtractor;
}

/** What read_url returns to the model. */
export interface PageText {
  /** The final URL, after redirects. */
  url: string;
  title: string | null;
  text: string;
  /** True when the text was cut to the budget (the text then ends with a marker saying so). */
  truncated: boolean;
}

const readUrlArgs = z.object({
  url: z
    .string()
    .trim()
    .min(1, { message: "give the address of the page" })
    .max(2048, { message: "a URL is at most 2048 characters" })
    .describe(
      'The full address of the page, starting with http:// or https://, e.g. a "link" from get_news. Copy it exactly.',
    ),
});

/** Time article extraction may take before the plain body text is used. */
const EXTRACT_TIMEOUT_MS = 5_000;
const HTML_TYPES = new Set(["text/html", "application/xhtml+xml"]);
const TEXT_TYPES = /^(text\/[\w.+-]+|application\/(json|xml|[\w.-]+\+json|[\w.-]+\+xml|javascript|x-ndjson))$/;

/** Builds the read_url tool. */
export function createReadUrlTool(deps: ReadUrlDeps = {}): Tool<typeof readUrlArgs> {
  const timeoutMs = deps.timeoutMs ?? 10_000;
  const maxChars = deps.maxChars ?? 6_000;
  const safeFetch = createSafeFetch({ ...deps, timeoutMs });
  const extractor = deps.extractor ?? createHtmlExtractor({ timeoutMs: EXTRACT_TIMEOUT_MS });
  return defineTool({
    name: "read_url",
    description:
      "Read a web page and return its title and main text (menus and ads removed), shortened if long. " +
      "Use it to get the full text of a news article (a link from get_news) or of a page the user gives. Only http and https addresses work.",
    schema: readUrlArgs,
    // Fetching and extracting have their own deadlines with clearer messages; the runner's is the backstop.
    timeoutMs: timeoutMs + EXTRACT_TIMEOUT_MS + 1_000,
    async execute({ url }, { signal }) {
      // Small models often drop the scheme ("example.com/page"); https is the sensible guess.
      const target = /^[a-z][a-z0-9+.-]*:/i.test(url) ? url : `https://${url}`;
      const res = await safeFetch(target, { signal });
      if (res.status < 200 || res.status > 299)
        throw new ToolError(`HTTP ${res.status} from ${res.url}: the page could not be read`);
      const kind = contentKind(res.contentType, res.body);
      if (kind === "refused") {
        throw new ToolError(
          `refused: ${res.url} is ${res.contentType || "binary data"}, not a web page (read_url reads HTML, plain text and JSON)`,
        );
      }
      const decoded = decode(res.body, res.charset, kind === "html");
      const { title, text } =
        kind === "html"
          ? await extractor.extract(decoded, { signal })
          : { title: null, text: plainText(decoded, res.contentType) };
      if (text === "" && !title) throw new ToolError(`${res.url} has no readable text`);
      const cut = cutToBudget(text, maxChars);
      return { url: res.url, title, text: cut.text, truncated: cut.truncated || res.truncated } satisfies PageText;
    },
  });
}

function contentKind(contentType: string, body: Buffer): "html" | "text" | "refused" {
  if (HTML_TYPES.has(contentType)) return "html";
  if (TEXT_TYPES.test(contentType)) return "text";
  if (contentType !== "") return "refused";
  // No Content-Type: sniff like a browser would, but only for markup or clean text.
  const head = body.subarray(0, 1024);
  if (/^\s*(<!doctype html|<html|<head|<body)/i.test(head.toString("latin1"))) return "html";
  return head.includes(0) ? "refused" : "text";
}

/** Bytes to text: header charset, else a <meta> declaration, else UTF-8 (a BOM wins). */
function decode(body: Buffer, charset: string | undefined, html: boolean): string {
  const meta = html ? /<meta[^>]+charset\s*=\s*["']?\s*([a-z0-9_.:-]+)/i.exec(body.toString("latin1", 0, 4096)) : null;
  const declared = charset ?? meta?.[1];
  try {
    return new TextDecoder(declared ?? "utf-8").decode(body);
  } catch {
    // An unknown label: UTF-8 is the best guess and never throws.
    return new TextDecoder("utf-8").decode(body);
  }
}

function plainText(text: string, contentType: string): string {
  if (contentType.includes("json")) {
    try {
      // Compact JSON spends the budget on data, not indentation.
      return JSON.stringify(JSON.parse(text));
    } catch {
      // Not valid JSON after all: return it as text.
    }
  }
  return clean(text);
}

/** Cuts to `max` characters at a sentence or word boundary when one is near, and says so. */
export function cutToBudget(text: string, max: number): { text: string; truncated: boolean } {
  const chars = Array.from(text);
  if (chars.length <= max) return { text, truncated: false };
  let head = chars.slice(0, max).join("");
  const boundary = Math.max(
    head.lastIndexOf("\n"),
    head.lastIndexOf(". "),
    head.lastIndexOf("。"),
    head.lastIndexOf("! "),
    head.lastIndexOf("? "),
  );
  if (boundary > head.length * 0.8) head = head.slice(0, boundary + 1);
  else if (head.lastIndexOf(" ") > head.length * 0.9) head = head.slice(0, head.lastIndexOf(" "));
  return {
    text: `${head.trimEnd()}\n[… cut: showing the first ${Array.from(head.trimEnd()).length} of ${chars.length} characters]`,
    truncated: true,
  };
}
