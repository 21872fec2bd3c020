/** get_news: the latest headlines for a topic from the RSS or Atom search feed NEWS_RSS_URL. */
import { z } from "zod";
import { backendFetch } from "./backend-fetch.js";
import { defineTool, type Tool } from "./tool.js";
import { ToolError } from "./tool-error.js";
import type { NewsItem } from "./news-feed.js";

export type { NewsItem };

/** Dependencies of get_news. */
export interface GetNewsDeps {
  /** NEWS_RSS_URL: a feed URL with `{query}` where the URL-encoded topic goes. */
  newsRssUrl: string;
  timeoutMs?: number;
  /** Headlines returned at most (default 8). */
  maxItems?: number;
}

const newsArgs = z.object({
  topic: z
    .string()
    .trim()
    .min(1, { message: "give a topic to search for" })
    .max(200, { message: "a topic is at most 200 characters" })
    .describe(
      'What to search the news for, in a few words, e.g. "AI", "人工智能", "Tesla earnings". Use "world" for general headlines.',
    ),
});

/** Builds the get_news tool. */
export function createGetNewsTool(deps: GetNewsDeps): Tool<typeof newsArgs> {
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
      const res = await backendFetch(newsFeedUrl(deps.newsRssUrl, topic), {
        service: "news service",
        timeoutMs,
        maxBytes: 2 * 1024 * 1024,
        signal,
        accept: "application/rss+xml, application/atom+xml, application/xml;q=0.9, text/xml;q=0.9",
      });
      if (res.status !== 200) throw new ToolError(`news service error: HTTP ${res.status}`);
      // Loaded on the first search: a process that never searches the news never loads linkedom.
      const { parseFeed } = await import("./news-feed.js");
      const items = parseFeed(res.text).slice(0, maxItems);
      if (items.length === 0) throw new ToolError(`no news found for "${topic}"; try a shorter or more general topic`);
      return items;
    },
  });
}

/** The feed URL for a topic: every `{query}` in the template replaced by the percent-encoded topic. */
export function newsFeedUrl(template: string, topic: string): string {
  const encoded = encodeURIComponent(topic);
  return template
    .split("{query}")
    .join(encoded)
    .replace(/%7Bquery%7D/gi, encoded);
}
