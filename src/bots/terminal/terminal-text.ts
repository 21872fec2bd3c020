/**
 * What the terminal shows: Markdown as plain text (no `get\_weather` escapes), and the rows a text takes
 * (CJK and emoji are two columns wide).
 */
import stringWidth from "string-width";

const segmenter = new Intl.Segmenter();

/** Markdown as a terminal should show it: escapes and emphasis markers gone, code blocks kept as written. */
export function plainText(markdown: string): string {
  // Odd parts are fenced code blocks: shown as they are.
  return markdown
    .split(/(^```[^\n]*\n[\s\S]*?(?:^```[^\n]*$|(?![\s\S])))/m)
    .map((part, i) => (i % 2 === 1 ? part : plainProse(part)))
    .join("");
}

function plainProse(text: string): string {
  // Inline code spans keep their content verbatim; the rest loses its markers.
  return text
    .split(/(`[^`\n]+`)/)
    .map((part, i) => (i % 2 === 1 ? part.slice(1, -1) : plainInline(part)))
    .join("");
}

function plainInline(text: string): string {
  return (
    text
      // Emphasis first (its markers are unescaped ones), then the escapes.
      .replace(/(?<![\\\w])\*\*(?=\S)([^*\n]+?)(?<=\S)\*\*(?!\w)/g, "$1")
      .replace(/(?<![\\\w])__(?=\S)([^_\n]+?)(?<=\S)__(?!\w)/g, "$1")
      .replace(/(?<![\\\w*])\*(?=\S)([^*\n]+?)(?<=[^\s\\])\*(?![\w*])/g, "$1")
      .replace(/(?<![\\\w_])_(?=\S)([^_\n]+?)(?<=[^\s\\])_(?![\w_])/g, "$1")
      .replace(/(?<!\\)~~(?=\S)([^~\n]+?)(?<=\S)~~/g, "$1")
      .replace(/\[([^\]\n]+)\]\((https?:\/\/[^)\s]+)\)/g, (_, label: string, url: string) =>
        label === url ? url : `${label} (${url})`,
      )
      .replace(/\\([\\`*_~|[\]<>#+\-.!(){}])/g, "$1")
  );
}

/**
 * The screen rows a block of text takes at `columns`: each line wraps where the terminal
 * wraps it, and a wide character that does not fit in the last column moves whole to the next row.
 */
export function screenRows(text: string, columns: number): number {
  let rows = 0;
  for (const line of text.split("\n")) {
    let row = 1;
    let column = 0;
    for (const { segment } of segmenter.segment(line)) {
      const width = stringWidth(segment);
      if (width === 0) continue;
      if (column + width > columns) {
        row++;
        column = 0;
      }
      column += width;
    }
    rows += row;
  }
  return rows;
}
