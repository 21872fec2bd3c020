/**
 * How long a rendered message is in the platform's own terms: Telegram counts
 * the visible text after entity parsing, everything else counts the text sent.
 * Both in UTF-16 code units (Telegram's unit; an upper bound for code points).
 */
import type { RenderedText } from "../contracts/reply-port.js";
import { telegramVisibleText } from "../adapters/telegram/telegram-html.js";

/** The text a user sees for rendered content. */
export function visibleText(content: RenderedText): string {
  return content.parseMode === "HTML" ? telegramVisibleText(content.text) : content.text;
}

/** The length a platform checks against `ReplyLimits.maxLength`. */
export function renderedLength(content: RenderedText): number {
  return visibleText(content).length;
}
