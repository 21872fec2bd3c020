/**
 * Splits Markdown into messages that each fit the platform's limit *after*
 * formatting (Telegram counts visible characters of the rendered HTML, so the
 * measure is injected). Cuts prefer a paragraph, then a line, a sentence, a word
 * and only then a hard cut, never inside a UTF-16 surrogate pair. A code fence
 * open at a cut is closed at the end of the piece and reopened (same language)
 * at the start of the next. No character of the input is lost: every piece is
 * `prefix + input.slice(start, end) + suffix`, and the slices tile the input.
 */
import { closingFor, fenceAfter, reopenLine, type OpenFence } from "../shared/code-fence.js";

/** One message's worth of Markdown and where it came from. */
export interface SplitPiece {
  /** The Markdown to send: `prefix + input.slice(start, end) + suffix`. */
  text: string;
  start: number;
  end: number;
  /** Reopens a fence that was open at `start` ("" if none). */
  prefix: string;
  /** Closes a fence still open at `end` ("" if none). */
  suffix: string;
  /** The fence open at `end` in the input (the next piece reopens it). */
  fenceAfter?: OpenFence;
}

/** How to split: the limit, the measure that applies it, and a fence already open at the start. */
export interface SplitOptions {
  /** Maximum `measure(piece.text)`. */
  limit: number;
  /** Length of a piece as the platform counts it (e.g. visible length of the rendered text). */
  measure(markdown: string): number;
  /** A fence already open where `markdown` starts (continuing an earlier split). */
  openFence?: OpenFence;
}

const isHigh = (code: number) => code >= 0xd800 && code <= 0xdbff;
const isLow = (code: number) => code >= 0xdc00 && code <= 0xdfff;

/** How many of the nicest boundaries of a level we try before falling back (the measure is not monotonic). */
const TRIES_PER_LEVEL = 4;

/** Splits Markdown into pieces that fit `limit` after formatting; see the module comment for the guarantees. */
export function splitMarkdownPieces(markdown: string, opts: SplitOptions): SplitPiece[] {
  const pieces: SplitPiece[] = [];
  let pos = 0;
  let fence = opts.openFence;
  while (pos < markdown.length) {
    const prefix = fence ? `${reopenLine(fence)}\n` : "";
    const startFence = fence;
    const build = (end: number): SplitPiece => {
      const body = markdown.slice(pos, end);
      const after = fenceAfter(body, startFence);
      const suffix = after ? closingFor(prefix + body, after) : "";
      return { text: prefix + body + suffix, start: pos, end, prefix, suffix, ...(after ? { fenceAfter: after } : {}) };
    };
    const fits = (piece: SplitPiece) => opts.measure(piece.text) <= opts.limit;

    const whole = build(markdown.length);
    if (fits(whole)) {
      pieces.push(whole);
      break;
    }

    // Ends of code points from pos on; the largest end that fits is found by bisection.
    // Formatting can hide much of the Markdown (link targets, markers), but not 8× the limit of it.
    const scanEnd = Math.min(markdown.length, pos + 8 * opts.limit);
    const ends: number[] = [];
    for (let i = pos; i < scanEnd; ) {
      i += isHigh(markdown.charCodeAt(i)) && isLow(markdown.charCodeAt(i + 1)) ? 2 : 1;
      ends.push(i);
    }
    const smallest = build(ends[0] as number);
    if (!fits(smallest)) {
      throw new RangeError(`limit ${opts.limit} is too small for one character plus code fence markers`);
    }
    let lo = 0;
    let hi = ends[ends.length - 1] === markdown.length ? ends.length - 2 : ends.length - 1; // the whole rest does not fit
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      if (fits(build(ends[mid] as number))) lo = mid;
      else hi = mid - 1;
    }
    const maxEnd = ends[lo] as number;
    const piece = chooseCut(markdown, pos, maxEnd, build, fits) ?? build(maxEnd);
    pieces.push(piece);
    fence = piece.fenceAfter;
    pos = piece.end;
  }
  return pieces;
}

/** Splits Markdown into message texts; see `splitMarkdownPieces`. */
export function splitMarkdown(markdown: string, opts: SplitOptions): string[] {
  return splitMarkdownPieces(markdown, opts).map((p) => p.text);
}

/** Candidate cut positions in (pos, maxEnd], best level first, each level nicest (latest) first. */
function candidateLevels(text: string, pos: number, maxEnd: number): number[][] {
  const window = text.slice(pos, maxEnd);
  const paragraphs: number[] = [];
  const lines: number[] = [];
  const sentences: number[] = [];
  const words: number[] = [];
  const collect = (re: RegExp, into: number[]) => {
    for (const m of window.matchAll(re)) into.push(pos + (m.index ?? 0) + m[0].length);
  };
  // Each cut lands after the whitespace, so the next message starts with content.
  collect(/\n[ \t]*\n\s*/g, paragraphs);
  collect(/\n\s*/g, lines);
  collect(/[.!?…](?:["')\]]*)\s+|[。！？；]\s*/g, sentences);
  collect(/\s+/g, words);
  return [paragraphs, lines, sentences, words].map((list) => list.filter((c) => c > pos && c <= maxEnd).reverse());
}

function chooseCut(
  text: string,
  pos: number,
  maxEnd: number,
  build: (end: number) => SplitPiece,
  fits: (piece: SplitPiece) => boolean,
): SplitPiece | undefined {
  // A boundary in the first half of the window would waste most of a message: cut harder instead.
  const minEnd = pos + Math.floor((maxEnd - pos) / 2);
  for (const level of candidateLevels(text, pos, maxEnd)) {
    let tries = 0;
    for (const cut of level) {
      if (cut < minEnd || tries++ >= TRIES_PER_LEVEL) break;
      if (text.slice(pos, cut).trim() === "") continue;
      const piece = build(cut);
      if (fits(piece)) return piece;
    }
  }
  return undefined;
}
