/** A news feed read into headlines with linkedom; apart from get-news.ts so linkedom loads only on a search. */
import { DOMParser, parseHTML } from "linkedom";
import { ToolError } from "./tool-error.js";

/** One headline as the model sees it. */
export interface NewsItem {
  title: string;
  link: string | null;
  /** ISO 8601 when the feed's date parses, else the feed's own text. */
  published: string | null;
  source: string | null;
}

/** Minimal element surface used here (linkedom's XML elements provide it). */
interface XmlElement {
  tagName: string;
  textContent: string | null;
  children: ArrayLike<XmlElement> & Iterable<XmlElement>;
  getAttribute(name: string): string | null;
  getElementsByTagName(name: string): ArrayLike<XmlElement> & Iterable<XmlElement>;
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
  return (el && Array.from(el.children).find((c) => c.tagName === tag)) ?? null;
}

function text(el: XmlElement | null | undefined): string | null {
  return el?.textContent?.replace(/\s+/g, " ").trim() || null;
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
