/**
 * Cutting text to a length (in UTF-16 units, as zod and the platforms count) without splitting a surrogate pair:
 * a lone half is written as `\ud83d` by JSON.stringify, and strict parsers (the model server's) refuse the request.
 */

const LONE_HALF_SOURCE = "[\\ud800-\\udbff](?![\\udc00-\\udfff])|(?<![\\ud800-\\udbff])[\\udc00-\\udfff]";
const LONE_HALF = new RegExp(LONE_HALF_SOURCE);
const LONE_HALF_ALL = new RegExp(LONE_HALF_SOURCE, "g");

/** True for the first (high) half of a UTF-16 surrogate pair. */
function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/** Replaces any lone surrogate half with U+FFFD, so the text is valid Unicode (and valid JSON everywhere). */
export function wellFormed(text: string): string {
  return LONE_HALF.test(text) ? text.replace(LONE_HALF_ALL, "\ufffd") : text;
}

/** The first at most `maxUnits` UTF-16 units of `text`, never ending inside a character; lone halves become U+FFFD. */
export function cutText(text: string, maxUnits: number): string {
  if (text.length <= maxUnits) return wellFormed(text);
  let end = Math.max(0, maxUnits);
  if (end > 0 && isHighSurrogate(text.charCodeAt(end - 1))) end--;
  return wellFormed(text.slice(0, end));
}

/** `cutText` with `marker` appended when something was cut (the result may exceed `maxUnits` by the marker). */
export function cutTextWithMarker(text: string, maxUnits: number, marker: string): string {
  return text.length <= maxUnits ? wellFormed(text) : cutText(text, maxUnits) + marker;
}
