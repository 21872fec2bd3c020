/**
 * Model output must not ping people: in a group a plain `@username` notifies that member, whoever made the
 * model write it. A word joiner after the `@` keeps it readable but no username (like Discord's
 * `allowed_mentions`); the asker's own username stays live.
 */

/** U+2060 WORD JOINER: invisible, and not a username character. */
const WORD_JOINER = "\u2060";

/** `@name` where a Telegram client would see a mention: not glued to a word before it (an e-mail address). */
const MENTION = /(^|[^\p{L}\p{N}_@])@([A-Za-z0-9_]+)/gu;

/** Defuses every `@username` in the text parts of Telegram HTML (not in tags, `<code>` or `<pre>`), except `keep`. */
export function defuseMentions(html: string, keep?: string): string {
  if (!html.includes("@")) return html;
  const own = keep?.replace(/^@/, "").toLowerCase();
  let verbatim = 0;
  return html
    .split(/(<[^>]*>)/)
    .map((part) => {
      if (part.startsWith("<")) {
        const tag = /^<(\/?)(code|pre)\b/i.exec(part);
        if (tag) verbatim += tag[1] ? -1 : 1;
        return part;
      }
      if (verbatim > 0) return part;
      return part.replace(MENTION, (whole, before: string, name: string) =>
        name.toLowerCase() === own ? whole : `${before}@${WORD_JOINER}${name}`,
      );
    })
    .join("");
}
