/**
 * What a user sees of a rendered message, whose length (UTF-16 units) a platform checks against its
 * limit: the port says (Telegram counts the text after entity parsing), else the text sent counts.
 */
import type { RenderedText, ReplyPort } from "../contracts/reply-port.js";

/** The text a user sees for rendered content. */
export function visibleText(port: Pick<ReplyPort, "visibleText">, content: RenderedText): string {
  return port.visibleText ? port.visibleText(content) : content.text;
}
