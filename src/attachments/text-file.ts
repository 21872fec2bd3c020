/** A text file from the chat (valid UTF-8 without NUL bytes only), fenced under its name and cut to a budget. */
import { AttachmentError } from "../contracts/file-source.js";

/** Files larger than this are not inlined at all. */
export const MAX_TEXT_FILE_BYTES = 200 * 1024;

/** The fenced block for the model; rejects with AttachmentError("refused") when the bytes are not text. */
export function inlineTextFile(name: string, bytes: Uint8Array, budgetChars: number): string {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new AttachmentError("refused", `${name} is not a text file I can read`);
  }
  if (text.includes("\u0000")) throw new AttachmentError("refused", `${name} is not a text file I can read`);
  return fencedFile(name, text, budgetChars);
}

/** `File <name>:` and the text in a fence longer than any backtick run inside it; cut texts say so. */
export function fencedFile(name: string, text: string, budgetChars: number, what = "characters"): string {
  const body = text
    .replace(/\r\n?/g, "\n")
    .replace(/^\uFEFF/, "")
    .trimEnd();
  const cut = body.length > budgetChars;
  const shown = cut ? body.slice(0, budgetChars) : body;
  const longestRun = Math.max(2, ...[...shown.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = "`".repeat(longestRun + 1);
  const note = cut ? `\n(cut: the first ${budgetChars} of ${body.length} ${what})` : "";
  return `File ${name}:\n${fence}\n${shown}\n${fence}${note}`;
}
