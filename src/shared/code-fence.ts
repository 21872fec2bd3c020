/** Fenced code blocks as CommonMark reads them, shared so the renderer, splitter and formatters agree on them. */

/** An open fenced code block: its marker (e.g. "```"), info string and language. */
export interface OpenFence {
  marker: string;
  info: string;
  lang: string;
}

const FENCE_OPEN = /^ {0,3}(`{3,}|~{3,})(.*)$/;
const FENCE_CLOSE = /^ {0,3}(`{3,}|~{3,})[ \t]*$/;

/** Reads a fence opener line; undefined when the line does not open a fence. */
export function parseFenceOpen(line: string): OpenFence | undefined {
  const m = FENCE_OPEN.exec(line);
  if (!m) return undefined;
  const marker = m[1] as string;
  const info = (m[2] as string).trim();
  // CommonMark: a backtick fence's info string may not contain backticks (that is inline code).
  if (marker.startsWith("`") && info.includes("`")) return undefined;
  return { marker, info, lang: info.split(/\s+/)[0] ?? "" };
}

/** Whether `line` closes `fence`. */
export function closesFence(line: string, fence: OpenFence): boolean {
  const m = FENCE_CLOSE.exec(line);
  if (!m) return false;
  const run = m[1] as string;
  return run[0] === fence.marker[0] && run.length >= fence.marker.length;
}

/** The fence still open at the end of `text` (undefined = outside code), starting in state `open`. */
export function fenceAfter(text: string, open?: OpenFence): OpenFence | undefined {
  let state = open;
  let start = 0;
  for (;;) {
    const nl = text.indexOf("\n", start);
    const line = nl < 0 ? text.slice(start) : text.slice(start, nl);
    if (state) {
      if (closesFence(line, state)) state = undefined;
    } else {
      state = parseFenceOpen(line);
    }
    if (nl < 0) return state;
    start = nl + 1;
  }
}

/** The line that reopens `fence` (same marker and info) at the start of a continuation. */
export function reopenLine(fence: OpenFence): string {
  return fence.info ? `${fence.marker}${fence.info}` : fence.marker;
}

/** Text to append to `text` so that `fence`, open at its end, is closed. */
export function closingFor(text: string, fence: OpenFence): string {
  return text === "" || text.endsWith("\n") ? fence.marker : `\n${fence.marker}`;
}

/** Closes a fence left open at the end of `text` (a half-written answer). */
export function closeOpenFence(text: string): string {
  const open = fenceAfter(text);
  return open ? text + closingFor(text, open) : text;
}
