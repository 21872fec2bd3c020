/**
 * Model Markdown → Discord content: a fence left open mid-stream is closed (else Discord shows raw backticks),
 * and mentions are defused as defence in depth beside `allowed_mentions: { parse: [] }`.
 */
import { closeOpenFence } from "../../shared/code-fence.js";

/** Zero-width joiner: invisible, and it breaks Discord's mention parsing. */
const ZWJ = "\u200D";

/** Defuses `@everyone`, `@here`, `<@user>`, `<@!user>` and `<@&role>` in model output. */
export function neutraliseMentions(text: string): string {
  return text.replace(/@(everyone|here)/gi, `@${ZWJ}$1`).replace(/<@([!&]?\d+)>/g, `<@${ZWJ}$1>`);
}

/** Renders model Markdown for Discord: mentions defused, an unclosed code fence closed. */
export function toDiscordMarkdown(md: string): string {
  return closeOpenFence(neutraliseMentions(md));
}
