/**
 * get_news: the latest headlines for a topic from an RSS 2.0 or Atom search
 * feed (NEWS_RSS_URL, a template with `{query}`), parsed as XML (linkedom),
 * returned as `[{title, link, published, source}]`.
 */
import { DOMParser, parseHTML } from "linkedom";
import { z } from "zod";
import { backendFetch } from "./backend-fetch.js";
import { defineTool, type Tool } from "./tool.js";
import { ToolError } from "./tool-error.js";

/** Dependencies of get_news. */
export interface GetNewsDeps {
  /** NEWS_RSS_URL: a feed URL with `{query}` where the URL-encoded topic goes. */
  newsRssUrl: string;
  fetch?: typeof fetch;
  timeoutMs?: number;
  maxBytes?: number;
  /** Headlines returned at most (default 8). */
  maxItems?: number;
}

/** One headline as the model sees it. */
export interface NewsItem {
  title: string;
  link: string | null;
  /** ISO 8601 when the feed's date parses, else the feed's own text. */
  published: string | null;
  source: string | null;
}

const newsArgs = z.object({
  topic: z
    .string()
    .trim()
    .min(1, { message: "give a topic to search for" })
    .max(200, { message: "a topic is at most 200 characters" })
    .describe('What to search the news for, in a few words, e.g. "AI", "人工智能", "Tesla earnings". Use "world" for general headlines.'),
});

/** Minimal element surface used here (linkedom's XML elements provide it). */
interface XmlElement {
  tagName: string;
  textContent: string | null;
  children: ArrayLike<XmlElement> & Iterable<XmlElement>;
  getAttribute(name: string): string | null;
  getElementsByTagName(name: string): ArrayLike<XmlElement> & Iterable<XmlElement>;
}

/** Builds the get_news tool. */
export function createGetNewsTool(deps: GetNewsDeps): Tool<typeof newsArgs> {
  const fetchFn = deps.fetch ?? globalThis.fetch;
  const timeoutMs = deps.timeoutMs ?? 8_000;
  const maxItems = deps.maxItems ?? 8;
  return defineTool({
    name: "get_news",
    description:
      "Search the latest news headlines about a topic. Returns a JSON list of {title, link, published, source}, newest first as the feed orders them. " +
      "To give the full text of an article, call read_url with its link.",
    schema: newsArgs,
    timeoutMs: timeoutMs + 2_000,
    async execute({ topic }, { signal }) {
      const url = newsFeedUrl(deps.newsRssUrl, topic);
      const res = await backendFetch(url, {
        fetch: fetchFn,
        service: "news service",
        timeoutMs,
        maxBytes: deps.maxBytes ?? 2 * 1024 * 1024,
        signal,
        accept: "application/rss+xml, application/atom+xml, application/xml;q=0.9, text/xml;q=0.9",
      });
      if (res.status !== 200) throw new ToolError(`news service error: HTTP ${res.status}`);
      const items = parseFeed(res.text).slice(0, maxItems);
      if (items.length === 0) throw new ToolError(`no news found for "${topic}"; try a shorter or more general topic`);
      return items;
    },
  });
}

/** The feed URL for a topic: every `{query}` in the template replaced by the percent-encoded topic. */
export function newsFeedUrl(template: string, topic: string): string {
  const encoded = encodeURIComponent(topic);
  return template.split("{query}").join(encoded).replace(/%7Bquery%7D/gi, encoded);
}

/** Parses RSS 2.0, RSS 1.0 (RDF) or Atom into headlines; throws ToolError when the text is neither. */
export function parseFeed(xml: string): NewsItem[] {
  const doc = new DOMParser().parseFromString(xml, "text/xml") as unknown as { documentElement: XmlElement | null };
  const root = doc.documentElement;
  const kind = root?.tagName.toLowerCase();
  if (!root || (kind !== "rss" && kind !== "feed" && kind !== "rdf:rdf")) {
    throw new ToolError("the news service did not return an RSS or Atom feed");
  }
  if (kind === "feed") return parseAtom(root);
  const channelTitle = text(child(child(root, "channel") ?? root, "title"));
  return Array.from(root.getElementsByTagName("item"), (item) => {
    const source = text(child(item, "source")) ?? text(child(item, "dc:creator")) ?? channelTitle;
    const guid = child(item, "guid");
    const guidLink = guid && guid.getAttribute("isPermaLink") !== "false" ? text(guid) : null;
    return {
      title: stripSource(text(child(item, "title")) ?? "", source),
      link: text(child(item, "link")) ?? guidLink,
      published: date(text(child(item, "pubDate")) ?? text(child(item, "dc:date"))),
      source,
    };
  }).filter((i) => i.title !== "");
}

function parseAtom(feed: XmlElement): NewsItem[] {
  const feedTitle = text(child(feed, "title"));
  return Array.from(feed.getElementsByTagName("entry"), (entry) => {
    const links = Array.from(entry.children).filter((c) => c.tagName === "link");
    const alternate = links.find((l) => (l.getAttribute("rel") ?? "alternate") === "alternate") ?? links[0];
    const author = child(entry, "author");
    const source = text(child(child(entry, "source"), "title")) ?? text(child(author, "name")) ?? feedTitle;
    return {
      title: atomText(child(entry, "title")) ?? "",
      link: alternate?.getAttribute("href")?.trim() || null,
      published: date(text(child(entry, "published")) ?? text(child(entry, "updated"))),
      source,
    };
  }).filter((i) => i.title !== "");
}

function child(el: XmlElement | null | undefined, tag: string): XmlElement | null {
  if (!el) return null;
  for (const c of Array.from(el.children)) if (c.tagName === tag) return c;
  return null;
}

function text(el: XmlElement | null | undefined): string | null {
  const t = el?.textContent?.replace(/\s+/g, " ").trim();
  return t ? t : null;
}

/** Atom titles may be HTML (`type="html"`): the model wants the words, not the tags. */
function atomText(el: XmlElement | null): string | null {
  const raw = text(el);
  if (!raw || !el || !/^(html|xhtml)$/i.test(el.getAttribute("type") ?? "")) return raw;
  const { document } = parseHTML(`<!DOCTYPE html><html><body>${raw}</body></html>`);
  return text(document.body as unknown as XmlElement);
}

/** Google News appends " - Publisher" to every title; the publisher is already in `source`. */
function stripSource(title: string, source: string | null): string {
  return source && title.endsWith(` - ${source}`) ? title.slice(0, -(source.length + 3)).trim() : title;
}

function date(raw: string | null): string | null {
  if (!raw) return null;
  const ms = Date.parse(raw);
  return Number.isNaN(ms) ? raw : new Date(ms).toISOString();
}
