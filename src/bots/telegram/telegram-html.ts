/**
 * Model Markdown → the HTML subset of Telegram's Bot API (parse_mode "HTML"), which Telegram must never
 * reject, even mid-stream: tags come from a tree (balanced), text is escaped everywhere, unfinished
 * constructs stay literal (an unclosed ``` fence is closed). Nesting follows the entity rules
 * conservatively: nothing inside code/pre, no code/pre inside b/i/s/a, no pre or nested blockquote
 * inside a blockquote, no link inside a link.
 */
import { closesFence, parseFenceOpen } from "../../shared/code-fence.js";
import { defuseMentions } from "./telegram-mentions.js";

type StyleTag = "b" | "i" | "s" | "tg-spoiler";

type Inline =
  | { t: "text"; v: string }
  | { t: "code"; v: string }
  | { t: "style"; tag: StyleTag; c: Inline[] }
  | { t: "link"; href: string; c: Inline[] };

/** An emphasis delimiter run waiting to be matched (CommonMark's delimiter stack, simplified). */
interface Delim {
  t: "delim";
  ch: string;
  n: number;
  open: boolean;
  close: boolean;
}

type Node = Inline | Delim;

const ESCAPABLE = /[!-/:-@[-`{-~]/;
const WHITESPACE = /\s/u;
const PUNCTUATION = /[\p{P}\p{S}]/u;
// tg: links open proxies, logins, group joins and profiles inside the app at one tap: none is for model output.
const ALLOWED_PROTOCOLS = new Set(["http:", "https:", "mailto:"]);
/** Longest link label or destination we look for (news links run to a few hundred characters); keeps pathological input cheap. */
const LINK_SCAN_LIMIT = 1024;

/** Escapes text for Telegram HTML (`<`, `>`, `&`). */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>]/g, (c) => (c === "&" ? "&amp;" : c === "<" ? "&lt;" : "&gt;"));
}

function escapeAttribute(text: string): string {
  return escapeHtml(text).replace(/"/g, "&quot;");
}

/** Options of the renderer. */
export interface TelegramHtmlOptions {
  /** The asker's username: the only `@username` left able to notify (every other one is defused). */
  keepMention?: string;
}

/** Renders model Markdown as Telegram HTML that the Bot API accepts, also when the Markdown is half written. */
export function markdownToTelegramHtml(md: string, opts: TelegramHtmlOptions = {}): string {
  const html = renderBlocks(md.replace(/\r\n?/g, "\n").split("\n"), false);
  return defuseMentions(dropEmptyElements(html), opts.keepMention);
}

/** The text Telegram shows for our HTML: tags removed, entities decoded. */
export function telegramVisibleText(html: string): string {
  return html.replace(/<[^>]*>/g, "").replace(/&(lt|gt|amp|quot|#\d+|#x[0-9a-fA-F]+);/g, (_, name: string) => {
    const named = NAMED_ENTITIES[name];
    if (named) return named;
    const code = name.startsWith("#x") ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
    return code <= 0x10ffff ? String.fromCodePoint(code) : "";
  });
}

const NAMED_ENTITIES: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: '"' };

/** Length Telegram checks against its 4096 limit: UTF-16 code units of the visible text after entity parsing. */
export function telegramHtmlLength(html: string): number {
  return telegramVisibleText(html).length;
}

// ---------------------------------------------------------------------------------------------
// Blocks

const HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const QUOTE = /^ {0,3}>/;
const RULE = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const BULLET = /^([ \t]*)[-*+][ \t]+(.*)$/;
const ORDERED = /^([ \t]*)(\d{1,9}[.)])[ \t]+(.*)$/;
const TASK = /^\[([ xX])\][ \t]+(.*)$/;

function isBlockStart(line: string, inQuote: boolean): boolean {
  return (
    parseFenceOpen(line) !== undefined ||
    (!inQuote && QUOTE.test(line)) ||
    HEADING.test(line) ||
    RULE.test(line) ||
    BULLET.test(line) ||
    ORDERED.test(line)
  );
}

/** Renders lines of Markdown; output keeps one output line per source line (Telegram keeps newlines). */
function renderBlocks(lines: string[], inQuote: boolean): string {
  const out: string[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i] as string;

    const fence = parseFenceOpen(line);
    if (fence) {
      const body: string[] = [];
      let j = i + 1;
      while (j < lines.length && !closesFence(lines[j] as string, fence)) body.push(lines[j++] as string);
      // An unclosed fence (mid-stream) runs to the end. No pre inside a blockquote: plain lines there.
      out.push(...(inQuote ? body.map(escapeHtml) : [renderPre(body.join("\n"), fence.lang)]));
      i = j + 1;
      continue;
    }

    if (!inQuote && QUOTE.test(line)) {
      const quoted: string[] = [];
      while (i < lines.length && QUOTE.test(lines[i] as string)) {
        // Nested quotes are flattened: Telegram does not nest blockquotes.
        quoted.push((lines[i] as string).replace(/^(?: {0,3}> ?)+/, ""));
        i++;
      }
      const inner = renderBlocks(quoted, true);
      out.push(inner.trim() === "" ? inner : `<blockquote>${inner}</blockquote>`);
      continue;
    }

    const heading = HEADING.exec(line);
    if (heading) {
      const text = heading[2] ?? "";
      out.push(text === "" ? "" : renderInline(text, [{ name: "b", open: "<b>" }]));
      i++;
      continue;
    }

    if (RULE.test(line)) {
      out.push("——————");
      i++;
      continue;
    }

    const bullet = BULLET.exec(line);
    const ordered = bullet ? null : ORDERED.exec(line);
    let prefix = "";
    let first = line;
    if (bullet) {
      const task = TASK.exec(bullet[2] as string);
      prefix = `${bullet[1]}${task ? (task[1] === " " ? "☐" : "☑") : "•"} `;
      first = task ? (task[2] as string) : (bullet[2] as string);
    } else if (ordered) {
      prefix = `${ordered[1]}${ordered[2]} `;
      first = ordered[3] as string;
    }

    if (line.trim() === "" && !bullet && !ordered) {
      out.push("");
      i++;
      continue;
    }

    // A paragraph (or list item) with its continuation lines; emphasis may span lines.
    const para = [first];
    i++;
    while (i < lines.length && (lines[i] as string).trim() !== "" && !isBlockStart(lines[i] as string, inQuote)) {
      para.push(lines[i++] as string);
    }
    out.push(escapeHtml(prefix) + renderInline(para.join("\n"), []));
  }
  return out.join("\n");
}

function renderPre(code: string, lang: string): string {
  if (code === "") return "";
  const safeLang = /^[A-Za-z0-9_+#.-]{1,32}$/.test(lang) ? lang : "";
  return safeLang
    ? `<pre><code class="language-${safeLang}">${escapeHtml(code)}</code></pre>`
    : `<pre>${escapeHtml(code)}</pre>`;
}

/** `<b></b>` and friends carry no text; removing them keeps the output minimal and unambiguous. */
function dropEmptyElements(html: string): string {
  let prev: string;
  let out = html;
  let guard = 0;
  do {
    prev = out;
    out = out.replace(/<(b|i|s|u|tg-spoiler|code|blockquote)><\/\1>/g, "").replace(/<a href="[^"]*"><\/a>/g, "");
  } while (out !== prev && ++guard < 16);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Inlines

interface OpenTag {
  name: string;
  open: string;
}

function renderInline(text: string, open: OpenTag[]): string {
  return openTags(open) + serialize(parseInline(text, true), open) + closeTags(open);
}

const openTags = (open: OpenTag[]) => open.map((t) => t.open).join("");
const closeTags = (open: OpenTag[]) => open.reduceRight((html, t) => `${html}</${t.name}>`, "");

function serialize(nodes: Inline[], open: OpenTag[]): string {
  let out = "";
  for (const node of nodes) {
    switch (node.t) {
      case "text":
        out += escapeHtml(node.v);
        break;
      case "code":
        if (node.v === "") break;
        // code may not sit inside b/i/s/a: close the open tags around it and reopen them after.
        out += `${closeTags(open)}<code>${escapeHtml(node.v)}</code>${openTags(open)}`;
        break;
      case "style":
        if (open.some((t) => t.name === node.tag)) {
          out += serialize(node.c, open);
        } else {
          const tag = { name: node.tag, open: `<${node.tag}>` };
          out += `${tag.open}${serialize(node.c, [...open, tag])}</${node.tag}>`;
        }
        break;
      case "link": {
        const children = plainText(node.c).trim() === "" ? [{ t: "text", v: node.href } as Inline] : node.c;
        const tag = { name: "a", open: `<a href="${escapeAttribute(node.href)}">` };
        out += `${tag.open}${serialize(children, [...open, tag])}</a>`;
        break;
      }
    }
  }
  return out;
}

function plainText(nodes: Inline[]): string {
  return nodes.map((n) => (n.t === "text" || n.t === "code" ? n.v : plainText(n.c))).join("");
}

function runLength(src: string, at: number, ch: string): number {
  let n = 0;
  while (src[at + n] === ch) n++;
  return n;
}

/** Index of the `]` matching each `[` (escapes respected), computed once per paragraph. */
function matchBrackets(src: string): Map<number, number> {
  const matches = new Map<number, number>();
  const stack: number[] = [];
  for (let i = 0; i < src.length; i++) {
    const c = src[i];
    if (c === "\\") i++;
    else if (c === "[") stack.push(i);
    else if (c === "]" && stack.length > 0) matches.set(stack.pop() as number, i);
  }
  return matches;
}

/** Parses `(dest "title")` right after a link label; undefined when it is not (yet) complete. */
function parseDestination(src: string, at: number): { dest: string; end: number } | undefined {
  if (src[at] !== "(") return undefined;
  const limit = Math.min(src.length, at + LINK_SCAN_LIMIT);
  let k = at + 1;
  while (k < limit && (src[k] === " " || src[k] === "\t")) k++;
  let dest: string;
  if (src[k] === "<") {
    const end = src.indexOf(">", k);
    if (end < 0 || end >= limit || src.slice(k, end).includes("\n")) return undefined;
    dest = src.slice(k + 1, end);
    k = end + 1;
  } else {
    const start = k;
    let depth = 0;
    while (k < limit) {
      const c = src[k] as string;
      if (c === "\\") {
        k += 2;
        continue;
      }
      if (WHITESPACE.test(c)) break;
      if (c === "(") depth++;
      if (c === ")") {
        if (depth === 0) break;
        depth--;
      }
      k++;
    }
    dest = src.slice(start, k);
  }
  while (k < limit && (src[k] === " " || src[k] === "\t")) k++;
  const q = src[k];
  if (q === '"' || q === "'" || q === "(") {
    const closer = q === "(" ? ")" : q;
    const end = src.indexOf(closer, k + 1);
    if (end < 0 || end >= limit) return undefined;
    k = end + 1;
    while (k < limit && (src[k] === " " || src[k] === "\t")) k++;
  }
  if (src[k] !== ")") return undefined;
  return { dest: dest.replace(/\\([!-/:-@[-`{-~])/g, "$1"), end: k + 1 };
}

/** A link target Telegram accepts and that cannot be abused; undefined = show the label as plain text. */
export function safeHref(dest: string): string | undefined {
  let url: URL;
  try {
    url = new URL(dest.trim());
  } catch {
    return undefined; // not a URL: the label is shown without a link
  }
  if (!ALLOWED_PROTOCOLS.has(url.protocol)) return undefined;
  if ((url.protocol === "http:" || url.protocol === "https:") && url.hostname === "") return undefined;
  return url.href;
}

function parseInline(src: string, allowLinks: boolean): Inline[] {
  const nodes: Node[] = [];
  const brackets = allowLinks ? matchBrackets(src) : undefined;
  // Once a backtick run of length n found no closer after position p, none exists after any later p either.
  const noCloserFrom = new Map<number, number>();
  let buf = "";
  const flush = () => {
    if (buf !== "") nodes.push({ t: "text", v: buf });
    buf = "";
  };

  let i = 0;
  while (i < src.length) {
    const c = src[i] as string;

    if (c === "\\" && i + 1 < src.length && ESCAPABLE.test(src[i + 1] as string)) {
      buf += src[i + 1];
      i += 2;
      continue;
    }

    if (c === "`") {
      const n = runLength(src, i, "`");
      const close = findBacktickCloser(src, i + n, n, noCloserFrom);
      if (close >= 0) {
        flush();
        nodes.push({ t: "code", v: normaliseCode(src.slice(i + n, close)) });
        i = close + n;
      } else {
        buf += src.slice(i, i + n);
        i += n;
      }
      continue;
    }

    if (c === "[" && brackets) {
      const close = brackets.get(i);
      const dest = close !== undefined && close - i <= LINK_SCAN_LIMIT ? parseDestination(src, close + 1) : undefined;
      if (close !== undefined && dest) {
        flush();
        const label = parseInline(src.slice(i + 1, close), false);
        const href = safeHref(dest.dest);
        if (href) nodes.push({ t: "link", href, c: label });
        else nodes.push(...label);
        i = dest.end;
        continue;
      }
    }

    if (c === "<" && allowLinks) {
      const auto = /^<((?:https?|mailto):[^\s<>]*)>/i.exec(src.slice(i, i + LINK_SCAN_LIMIT));
      const href = auto ? safeHref(auto[1] as string) : undefined;
      if (auto && href) {
        flush();
        nodes.push({ t: "link", href, c: [{ t: "text", v: auto[1] as string }] });
        i += auto[0].length;
        continue;
      }
    }

    if (c === "*" || c === "_" || c === "~" || c === "|") {
      const n = runLength(src, i, c);
      if ((c === "~" || c === "|") && n !== 2) {
        buf += src.slice(i, i + n);
        i += n;
        continue;
      }
      const prev = i > 0 ? (src[i - 1] as string) : " ";
      const next = i + n < src.length ? (src[i + n] as string) : " ";
      const prevSpace = WHITESPACE.test(prev);
      const nextSpace = WHITESPACE.test(next);
      let open: boolean;
      let close: boolean;
      if (c === "_") {
        // Strict CommonMark flanking for "_" so snake_case identifiers stay intact.
        const prevPunct = PUNCTUATION.test(prev);
        const nextPunct = PUNCTUATION.test(next);
        const left = !nextSpace && (!nextPunct || prevSpace || prevPunct);
        const right = !prevSpace && (!prevPunct || nextSpace || nextPunct);
        open = left && (!right || prevPunct);
        close = right && (!left || nextPunct);
      } else {
        // Lenient for * ~ |: Chinese text like "**天气：**晴" must still be bold.
        open = !nextSpace;
        close = !prevSpace;
      }
      flush();
      nodes.push({ t: "delim", ch: c, n, open, close });
      i += n;
      continue;
    }

    buf += c;
    i++;
  }
  flush();
  return resolveEmphasis(nodes);
}

function findBacktickCloser(src: string, from: number, n: number, noCloserFrom: Map<number, number>): number {
  const known = noCloserFrom.get(n);
  if (known !== undefined && from >= known) return -1;
  let at = from;
  for (;;) {
    const idx = src.indexOf("`", at);
    if (idx < 0) {
      noCloserFrom.set(n, from);
      return -1;
    }
    const run = runLength(src, idx, "`");
    if (run === n) return idx;
    at = idx + run;
  }
}

function normaliseCode(code: string): string {
  const flat = code.replace(/\n/g, " ");
  return flat.length >= 2 && flat.startsWith(" ") && flat.endsWith(" ") && flat.trim() !== ""
    ? flat.slice(1, -1)
    : flat;
}

/** Matches delimiter runs into b/i/s/spoiler elements; unmatched delimiters become literal text. */
function resolveEmphasis(nodes: Node[]): Inline[] {
  // Per delimiter character: no opener exists below this index (CommonMark's "openers bottom"), so
  // text full of unmatched closers stays linear instead of quadratic.
  const bottom = new Map<string, number>();
  let i = 0;
  while (i < nodes.length) {
    const closer = nodes[i] as Node;
    if (closer.t !== "delim" || !closer.close || closer.n === 0) {
      i++;
      continue;
    }
    let found = -1;
    for (let j = i - 1; j >= (bottom.get(closer.ch) ?? 0); j--) {
      const o = nodes[j] as Node;
      if (o.t === "delim" && o.ch === closer.ch && o.open && o.n > 0) {
        found = j;
        break;
      }
    }
    if (found < 0) {
      bottom.set(closer.ch, i);
      i++;
      continue;
    }
    // Nodes between opener and closer collapse into one element: bottoms inside that range move down to it.
    for (const [ch, b] of bottom) if (b > found) bottom.set(ch, found + 1);
    const opener = nodes[found] as Delim;
    const use = closer.ch === "~" || closer.ch === "|" ? 2 : opener.n >= 2 && closer.n >= 2 ? 2 : 1;
    const tag: StyleTag = closer.ch === "~" ? "s" : closer.ch === "|" ? "tg-spoiler" : use === 2 ? "b" : "i";
    const inner = toInlines(nodes.slice(found + 1, i));
    opener.n -= use;
    closer.n -= use;
    nodes.splice(found + 1, i - found - 1, { t: "style", tag, c: inner });
    i = found + 2; // the closer's new index
    if (opener.n === 0) {
      nodes.splice(found, 1);
      i--;
      for (const [ch, b] of bottom) if (b > found) bottom.set(ch, b - 1);
    }
    if (closer.n === 0) nodes.splice(i, 1);
  }
  return toInlines(nodes);
}

function toInlines(nodes: Node[]): Inline[] {
  const out: Inline[] = [];
  for (const node of nodes) {
    const inline: Inline = node.t === "delim" ? { t: "text", v: node.ch.repeat(node.n) } : node;
    const last = out[out.length - 1];
    if (inline.t === "text" && last?.t === "text") last.v += inline.v;
    else if (!(inline.t === "text" && inline.v === ""))
      out.push(inline.t === "text" ? { t: "text", v: inline.v } : inline);
  }
  return out;
}
