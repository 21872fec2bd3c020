/**
 * The pure layout of a reply's view: which part is sealed (in earlier messages, final and never
 * rendered again) and which is the live tail. A seal point marks where the sealed part ends; the
 * view beyond it is split into pieces that fit the platform's limit, every piece but the last
 * becoming a sealed message, the last one the live text.
 */
import { closingFor, fenceAfter, type OpenFence } from "../shared/code-fence.js";
import { splitMarkdownPieces } from "./message-splitter.js";

/** Everything before segment `seg`, offset `offset` of the view is in earlier (final) messages. */
export interface SealPoint {
  seg: number;
  offset: number;
  /** A code fence open at that point (the next message reopens it). */
  fence?: OpenFence;
}

/** The start of a reply: nothing sealed yet. */
export const UNSEALED: SealPoint = { seg: 0, offset: 0 };

/** The view beyond a seal point, laid out into messages. */
export interface ViewLayout {
  /** Pieces that become final messages now, in order, each with the seal point after it. */
  sealed: { markdown: string; seal: SealPoint }[];
  /** The live tail's Markdown; undefined when nothing but whitespace lies beyond the seal. */
  live?: string;
}

/** Lays out the view's segments from `seal` on into messages of at most `limit` (as `measure` counts). */
export function layoutView(
  segments: readonly string[],
  seal: SealPoint,
  opts: { limit: number; measure(markdown: string): number },
): ViewLayout {
  const rest = remainderOf(segments, seal);
  if (rest.text.trim() === "") return { sealed: [] };
  const pieces = splitMarkdownPieces(rest.text, {
    limit: opts.limit,
    measure: opts.measure,
    ...(seal.fence ? { openFence: seal.fence } : {}),
  });
  const sealed: ViewLayout["sealed"] = [];
  let k = 0;
  for (; k < pieces.length - 1; k++) {
    const piece = pieces[k]!;
    if (rest.text.slice(piece.end).trim() === "") break; // only whitespace beyond: nothing to continue with
    sealed.push({ markdown: piece.text, seal: rest.pointAt(piece.end) });
  }
  return { sealed, live: pieces[k]!.text };
}

/** The view from a seal point on, and how to turn an offset in it back into a seal point. */
function remainderOf(
  segments: readonly string[],
  seal: SealPoint,
): { text: string; pointAt(offset: number): SealPoint } {
  let text = "";
  const parts: { at: number; seg: number; from: number; length: number }[] = [];
  for (let s = seal.seg; s < segments.length; s++) {
    const segment = segments[s] as string;
    const from = s === seal.seg ? Math.min(seal.offset, segment.length) : 0;
    const body = segment.slice(from);
    if (body === "") continue;
    if (text !== "") {
      // Same joining as the whole view: a fence left open by a segment is closed before the next.
      const open = fenceAfter(text, seal.fence);
      text += open ? `${closingFor(text, open)}\n\n` : "\n\n";
    }
    parts.push({ at: text.length, seg: s, from, length: body.length });
    text += body;
  }
  return {
    text,
    pointAt(offset) {
      for (let i = parts.length - 1; i >= 0; i--) {
        const part = parts[i]!;
        if (offset >= part.at) {
          const into = Math.min(offset - part.at, part.length);
          const fence = fenceAfter(text.slice(0, part.at + into), seal.fence);
          return { seg: part.seg, offset: part.from + into, ...(fence ? { fence } : {}) };
        }
        const previous = parts[i - 1];
        if (previous && offset >= previous.at + previous.length) {
          // Inside the separator: continue at the start of this part.
          const fence = fenceAfter(text.slice(0, part.at), seal.fence);
          return { seg: part.seg, offset: part.from, ...(fence ? { fence } : {}) };
        }
      }
      return seal;
    },
  };
}
