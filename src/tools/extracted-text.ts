/** Extracted page text: plain string work, apart from html-text.ts so the main thread never loads linkedom. */

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
  if (article.text.length < MIN_ARTICLE_CHARS && article.text.length < body.text.length) return body;
  return { ...article, title: article.title ?? body.title };
}

/** Collapses runs of whitespace inside lines and drops empty lines. */
export function clean(text: string): string {
  return text
    .split("\n")
    .map((line) => line.replace(/[\s\u00a0\u200b]+/g, " ").trim())
    .filter((line) => line !== "")
    .join("\n");
}
