/**
 * How long a rendered message is in the platform's own terms: the port says what a user sees of it
 * (Telegram counts the visible text after entity parsing), else the text sent counts. Both in UTF-16
 * code units (Telegram's unit; an upper bound for code points).
 */
import type { RenderedText, ReplyPort } from "../contracts/reply-port.js";

/** The text a user sees for rendered content. */
export function visibleText(port: Pick<ReplyPort, "visibleText">, content: RenderedText): string {
  return port.visibleText ? port.visibleText(content) : content.text;
}

/** The length a platform checks against `ReplyLimits.maxLength`. */
export function renderedLength(port: Pick<ReplyPort, "visibleText">, content: RenderedText): number {
  return visibleText(port, content).length;
}
