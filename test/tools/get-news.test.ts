import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect } from "vitest";
import { createGetNewsTool, newsFeedUrl, type NewsItem } from "../../src/tools/get-news.js";
import { parseFeed } from "../../src/tools/news-feed.js";
import { ToolError } from "../../src/tools/tool-error.js";
import { e2eTest } from "../support/fixtures.js";

const ctx = () => ({ signal: new AbortController().signal });

async function toolError(p: Promise<unknown>): Promise<string> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ToolError);
  return (err as ToolError).message;
}

/** A one-route server answering every request with the given status, type and body. */
async function serve(status: number, type: string, body: string): Promise<{ url: string; server: Server }> {
  const server = createServer((_req, res) => res.writeHead(status, { "content-type": type }).end(body));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

async function stop(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
}

describe("get_news", () => {
  e2eTest(
    "returns at most 8 headlines as {title, link, published, source} from a Google-News-style RSS feed",
    async ({ web }) => {
      const tool = createGetNewsTool({ newsRssUrl: `${web.url}/rss?q={query}&hl=en-US&gl=US&ceid=US:en` });
      const items = (await tool.execute({ topic: "AI" }, ctx())) as NewsItem[];
      expect(items).toHaveLength(8);
      expect(items[0]).toEqual({
        title: "AI lab releases a 2-billion-parameter model that runs on laptops",
        link: `${web.url}/article/1?q=AI&oc=5`,
        published: "2025-06-18T06:12:00.000Z",
        source: "Example Times",
      });
      for (const item of items) {
        expect(Object.keys(item).sort()).toEqual(["link", "published", "source", "title"]);
        expect(item.title).toBe(item.title.trim());
        // Google News's " - Publisher" suffix is gone: the publisher is in `source`.
        expect(item.title.endsWith(` - ${item.source}`)).toBe(false);
      }
      expect(web.requests[0]?.path).toBe("/rss?q=AI&hl=en-US&gl=US&ceid=US:en");
    },
  );

  e2eTest("puts the topic into the template URL-encoded, so user text cannot add parameters", async ({ web }) => {
    const tool = createGetNewsTool({ newsRssUrl: `${web.url}/rss?q={query}&hl=zh-CN` });
    const items = (await tool.execute({ topic: "人工智能 & 芯片&hl=en#x" }, ctx())) as NewsItem[];
    expect(web.requests[0]?.query.get("q")).toBe("人工智能 & 芯片&hl=en#x");
    expect(web.requests[0]?.query.getAll("hl")).toEqual(["zh-CN"]);
    expect(items[1]?.title).toBe("Regulators publish draft rules on 人工智能 & 芯片&hl=en#x transparency");
    expect(newsFeedUrl("https://n.example/s?q=%7Bquery%7D", "a b")).toBe("https://n.example/s?q=a%20b");
  });

  e2eTest("reads Atom feeds too", async ({ web }) => {
    const tool = createGetNewsTool({ newsRssUrl: `${web.url}/atom?q={query}` });
    const items = (await tool.execute({ topic: "robots" }, ctx())) as NewsItem[];
    expect(items).toHaveLength(4);
    expect(items[0]).toEqual({
      title: "robots lab releases a 2-billion-parameter model that runs on laptops",
      link: `${web.url}/article/1`,
      published: "2025-06-18T06:12:00.000Z",
      source: "Example Times",
    });
  });

  e2eTest("parses CDATA, entities, HTML titles, RSS 1.0 and odd dates without regexes tripping", () => {
    const rss = `<?xml version="1.0"?><rss version="2.0"><channel><title>Feed T</title>
      <item><title><![CDATA[  Tom & Jerry <3  ]]></title><link>
        https://x.example/a?b=1&amp;c=2
      </link><pubDate>not a date</pubDate></item>
      <item><title>No link</title><guid>https://x.example/guid</guid></item>
      <item><title></title><link>https://x.example/empty-title</link></item></channel></rss>`;
    expect(parseFeed(rss)).toEqual([
      { title: "Tom & Jerry <3", link: "https://x.example/a?b=1&c=2", published: "not a date", source: "Feed T" },
      { title: "No link", link: "https://x.example/guid", published: null, source: "Feed T" },
    ]);
    const rdf = `<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/">
      <channel><title>RDF feed</title></channel>
      <item><title>One</title><link>https://r.example/1</link><dc:date>2025-06-18T01:00:00Z</dc:date></item></rdf:RDF>`;
    expect(parseFeed(rdf)).toEqual([
      { title: "One", link: "https://r.example/1", published: "2025-06-18T01:00:00.000Z", source: "RDF feed" },
    ]);
    const atom = `<feed xmlns="http://www.w3.org/2005/Atom"><title>A</title><entry><title type="html">Big &lt;b&gt;news&lt;/b&gt;</title>
      <link rel="self" href="https://a.example/self"/><link href="https://a.example/alt"/><updated>2025-06-18T00:00:00Z</updated></entry></feed>`;
    expect(parseFeed(atom)).toEqual([
      { title: "Big news", link: "https://a.example/alt", published: "2025-06-18T00:00:00.000Z", source: "A" },
    ]);
  });

  e2eTest("an empty result, a non-feed answer, an HTTP error and a timeout are clear errors", async ({ web }) => {
    const tool = createGetNewsTool({ newsRssUrl: `${web.url}/rss?q={query}` });
    expect(await toolError(tool.execute({ topic: "no-results" }, ctx()))).toBe(
      'no news found for "no-results"; try a shorter or more general topic',
    );

    const html = await serve(200, "text/html", "<!DOCTYPE html><html><body>Consent required</body></html>");
    const down = await serve(503, "text/html", "<h1>Service Unavailable</h1>");
    try {
      expect(
        await toolError(createGetNewsTool({ newsRssUrl: `${html.url}/?q={query}` }).execute({ topic: "x" }, ctx())),
      ).toBe("the news service did not return an RSS or Atom feed");
      expect(
        await toolError(createGetNewsTool({ newsRssUrl: `${down.url}/?q={query}` }).execute({ topic: "x" }, ctx())),
      ).toBe("news service error: HTTP 503");
    } finally {
      await stop(html.server);
      await stop(down.server);
    }

    web.setDelay("/rss", 2_000);
    const slow = createGetNewsTool({ newsRssUrl: `${web.url}/rss?q={query}`, timeoutMs: 200 });
    expect(await toolError(slow.execute({ topic: "AI" }, ctx()))).toBe("news service timed out after 0.2s");
  });

  e2eTest("maxItems limits the list", async ({ web }) => {
    const tool = createGetNewsTool({ newsRssUrl: `${web.url}/rss?q={query}`, maxItems: 3 });
    expect((await tool.execute({ topic: "AI" }, ctx())) as NewsItem[]).toHaveLength(3);
  });
});
