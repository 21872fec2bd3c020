/**
 * The text extracted from a page, and the choice between Readability's article and the body
 * text. Plain string work, kept out of html-text.ts so that the main thread can use it without
 * loading linkedom and Readability, which only the extraction worker needs.
 */

/** Title and text pulled from a page, and how. */
export interface ExtractedText {
  title: string | null;
  text: string;
  method: "readability" | "body";
}

/** Below this many characters Readability's pick is probably a fragment; the body may say more. */
const MIN_ARTICLE_CHARS = 200;

/** Picks the better of Readability's article and the body fallback. */
export function chooseText(article: ExtractedText | undefined, body: ExtractedText): ExtractedText {
  if (!article) return body;
  if (article.text.length >= MIN_ARTICLE_CHARS || article.text.length >= body.text.length) {
    return { ...article, title: article.title ?? body.title };
  }
  return body;
}

/** Collapses runs of whitespace inside lines and drops empty lines. */
export function clean(text: string): string {
  return text
    .split("\n")
    .map((line) => line.replace(/[\s\u00a0\u200b]+/g, " ").trim())
    .filter((line) => line !== "")
    .join("\n");
}
