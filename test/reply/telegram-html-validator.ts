/**
 * A strict checker of Telegram's parse_mode "HTML" rules, for tests: what the
 * Bot API rejects ("Can't parse entities: …") is a problem here, and so is what
 * our renderer promises never to do (conservative nesting, empty elements).
 *
 * - only the tags b, i, u, s, code, pre, a, blockquote, tg-spoiler;
 * - `a` has exactly an href with a quoted http(s)/tg/mailto URL; `code` may carry
 *   class="language-x" only directly inside `pre`; `blockquote` may be expandable;
 * - every tag closed, properly nested; `&` only as &lt; &gt; &amp; &quot; or a
 *   numeric entity; no raw `<` or `>` in text;
 * - nothing inside code/pre (except pre > code); pre and blockquote at top level;
 *   no code inside b/i/u/s/a/tg-spoiler; no link inside a link; no empty element.
 */

const ALLOWED = new Set(["b", "i", "u", "s", "code", "pre", "a", "blockquote", "tg-spoiler"]);
const INLINE_STYLES = new Set(["b", "i", "u", "s", "a", "tg-spoiler"]);
const PROTOCOLS = new Set(["http:", "https:", "mailto:", "tg:"]);

interface Open {
  name: string;
  text: number;
  children: number;
}

function decode(value: string): string {
  return value
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, "&");
}

/** Lists every rule the HTML breaks; an empty list means Telegram accepts it. */
export function validateTelegramHtml(html: string): string[] {
  const problems: string[] = [];
  const stack: Open[] = [];
  let i = 0;
  while (i < html.length) {
    const c = html[i];
    if (c === "<") {
      const m = /^<(\/?)([a-z-]+)((?:\s+[a-z-]+="[^"<>]*")*)\s*>/.exec(html.slice(i, i + 4096));
      if (!m) {
        problems.push(`unescaped < at ${i}`);
        i++;
        continue;
      }
      const [whole, slash, name, attrText] = m as unknown as [string, string, string, string];
      i += whole.length;
      if (!ALLOWED.has(name)) problems.push(`tag <${name}> is not allowed`);
      if (slash) {
        const top = stack.pop();
        if (!top || top.name !== name) problems.push(`</${name}> does not close ${top ? `<${top.name}>` : "anything"}`);
        else if (top.text === 0) problems.push(`empty <${name}>`);
        continue;
      }
      const attrs = [...attrText.matchAll(/([a-z-]+)="([^"]*)"/g)].map((a) => ({
        key: a[1] as string,
        value: decode(a[2] as string),
      }));
      const parent = stack[stack.length - 1];
      const names = stack.map((o) => o.name);
      if (name === "a") {
        if (attrs.length !== 1 || attrs[0]?.key !== "href") problems.push("<a> needs exactly one href");
        else {
          try {
            const url = new URL(attrs[0].value);
            if (!PROTOCOLS.has(url.protocol)) problems.push(`href scheme ${url.protocol} not allowed`);
          } catch {
            problems.push(`href is not a URL: ${attrs[0].value}`);
          }
        }
        if (names.includes("a")) problems.push("link inside a link");
      } else if (name === "code") {
        const inPre = parent?.name === "pre" && parent.text === 0 && parent.children === 0;
        if (
          attrs.length > 0 &&
          !(inPre && attrs.length === 1 && attrs[0]?.key === "class" && /^language-[\w+#.-]+$/.test(attrs[0].value))
        ) {
          problems.push("bad attributes on <code>");
        }
        if (names.some((n) => INLINE_STYLES.has(n))) problems.push("<code> inside formatting");
        if (names.includes("code") || (names.includes("pre") && !inPre)) problems.push("<code> nested in code/pre");
      } else if (name === "blockquote") {
        if (attrs.some((a) => a.key !== "expandable")) problems.push("bad attributes on <blockquote>");
        if (stack.length > 0) problems.push("<blockquote> must be top level");
      } else {
        if (attrs.length > 0) problems.push(`<${name}> takes no attributes`);
        if (name === "pre" && stack.length > 0) problems.push("<pre> must be top level");
        if (names.includes("code") || names.includes("pre")) problems.push(`<${name}> inside code/pre`);
      }
      if (parent) parent.children++;
      stack.push({ name, text: 0, children: 0 });
      continue;
    }
    if (c === "&") {
      const m = /^&(lt|gt|amp|quot|#\d{1,7}|#x[0-9a-fA-F]{1,6});/.exec(html.slice(i, i + 12));
      if (!m) problems.push(`stray & at ${i}`);
      i += m ? m[0].length : 1;
    } else {
      if (c === ">") problems.push(`unescaped > at ${i}`);
      i++;
    }
    for (const open of stack) open.text++;
    const parent = stack[stack.length - 1];
    if (parent?.name === "pre" && parent.children > 0) problems.push("text after <code> in <pre>");
  }
  for (const open of stack) problems.push(`<${open.name}> is never closed`);
  return problems;
}
