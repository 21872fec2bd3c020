/**
 * Markdown from the model, rendered to DOM through a whitelist: paragraphs, headings, lists,
 * quotes, code blocks, inline code, bold, italic and http(s) links. Everything else, raw HTML
 * included, stays text. Links open in a new tab with no referrer; images are shown as their
 * alt text (an image would load a resource the model chose).
 */
import { h } from "./dom.js";

const INLINE =
  /(`+)([\s\S]*?[^`])\1(?!`)|\*\*([^*]+?)\*\*|__([^_]+?)__|!\[([^\]]*)\]\(([^)\s]*)\)|\[([^\]]+)\]\(([^)\s]*)\)|\*([^*\s][^*]*?)\*|(?<![\w])_([^_\s][^_]*?)_(?![\w])|(https?:\/\/[^\s<>()]+[^\s<>().,;:!?'"])/g;

/** True for an address the page may link to: http(s) only (no javascript:, data:, relative tricks). */
export function safeHref(raw: string): string | undefined {
  try {
    const url = new URL(raw);
    return url.protocol === "http:" || url.protocol === "https:" ? url.href : undefined;
  } catch {
    return undefined;
  }
}

function link(label: string, href: string): Node {
  const safe = safeHref(href);
  if (!safe) return document.createTextNode(label);
  return h("a", { href: safe, target: "_blank", rel: "noopener noreferrer nofollow" }, label);
}

/** Inline Markdown of one block's text. */
export function renderInline(text: string): DocumentFragment {
  const out = document.createDocumentFragment();
  let last = 0;
  for (const match of text.matchAll(INLINE)) {
    const at = match.index ?? 0;
    if (at > last) out.append(text.slice(last, at));
    const [whole, , code, bold, bold2, alt, , label, href, italic, italic2, bare] = match;
    if (code !== undefined) out.append(h("code", {}, code));
    else if (bold !== undefined || bold2 !== undefined) out.append(h("strong", {}, renderInline(bold ?? bold2 ?? "")));
    else if (alt !== undefined) out.append(alt);
    else if (label !== undefined) out.append(link(label, href ?? ""));
    else if (italic !== undefined || italic2 !== undefined)
      out.append(h("em", {}, renderInline(italic ?? italic2 ?? "")));
    else if (bare !== undefined) out.append(link(bare, bare));
    else out.append(whole);
    last = at + whole.length;
  }
  if (last < text.length) out.append(text.slice(last));
  return out;
}

function paragraph(lines: string[]): HTMLElement {
  const p = h("p");
  lines.forEach((line, i) => {
    if (i > 0) p.append(h("br"));
    p.append(renderInline(line));
  });
  return p;
}

/** Renders a Markdown text (possibly half-written: an open code fence runs to the end). */
export function renderMarkdown(markdown: string): DocumentFragment {
  const out = document.createDocumentFragment();
  const lines = markdown.replace(/\r\n?/g, "\n").split("\n");
  let i = 0;
  let para: string[] = [];
  const flush = () => {
    if (para.length > 0) out.append(paragraph(para));
    para = [];
  };
  while (i < lines.length) {
    const line = lines[i] ?? "";
    const fence = /^\s*(```+|~~~+)\s*([\w+-]*)/.exec(line);
    if (fence) {
      flush();
      const close = fence[1] ?? "```";
      const body: string[] = [];
      i++;
      while (i < lines.length && !(lines[i] ?? "").trim().startsWith(close)) body.push(lines[i++] ?? "");
      i++;
      const code = h("code", {}, body.join("\n"));
      if (fence[2]) code.setAttribute("data-lang", fence[2]);
      out.append(h("pre", {}, code));
      continue;
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    if (heading) {
      flush();
      const level = Math.min(6, (heading[1]?.length ?? 1) + 2);
      out.append(h(`h${level}` as "h3", {}, renderInline(heading[2] ?? "")));
      i++;
      continue;
    }
    const item = /^\s*([-*+]|\d+[.)])\s+(.*)$/.exec(line);
    if (item) {
      flush();
      const ordered = /\d/.test(item[1] ?? "");
      const list = h(ordered ? "ol" : "ul");
      while (i < lines.length) {
        const next = /^\s*([-*+]|\d+[.)])\s+(.*)$/.exec(lines[i] ?? "");
        if (!next || /\d/.test(next[1] ?? "") !== ordered) break;
        list.append(h("li", {}, renderInline(next[2] ?? "")));
        i++;
      }
      out.append(list);
      continue;
    }
    if (/^\s*>/.test(line)) {
      flush();
      const quoted: string[] = [];
      while (i < lines.length && /^\s*>/.test(lines[i] ?? "")) quoted.push((lines[i++] ?? "").replace(/^\s*>\s?/, ""));
      out.append(h("blockquote", {}, renderMarkdown(quoted.join("\n"))));
      continue;
    }
    if (line.trim() === "") flush();
    else para.push(line);
    i++;
  }
  flush();
  return out;
}
