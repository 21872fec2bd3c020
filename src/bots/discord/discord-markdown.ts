/**
 * Model Markdown → Discord message content. Discord renders Markdown itself, so
 * the text passes through with two repairs: a code fence left open mid-stream
 * is closed (else Discord shows the raw backticks until the model closes it),
 * and mention syntax is defused as defence in depth — the port also sends
 * `allowed_mentions: { parse: [] }`, but a model must never ping anyone even if
 * a request forgets that.
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
