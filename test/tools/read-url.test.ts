import { createServer, type Server } from "node:http";
import net, { type AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createGetNewsTool, type NewsItem } from "../../src/tools/get-news.js";
import { createHtmlExtractor, type HtmlExtractor } from "../../src/tools/html-extractor.js";
import { createReadUrlTool, cutToBudget, type PageText, type ReadUrlDeps } from "../../src/tools/read-url.js";
import { ToolError } from "../../src/tools/tool-error.js";
import { startFakeWeb, type FakeWeb } from "../fakes/web-server.js";

let web: FakeWeb;
let extractor: HtmlExtractor;
const ctx = () => ({ signal: new AbortController().signal });

beforeAll(async () => {
  web = await startFakeWeb();
  extractor = createHtmlExtractor();
});
afterAll(async () => {
  await extractor.close();
  await web.close();
});
afterEach(() => {
  web.requests.length = 0;
  web.setDelay("*", 0);
});

const readUrl = (deps: ReadUrlDeps = {}) =>
  createReadUrlTool({ allowHosts: [web.host], extractor, timeoutMs: 3_000, ...deps });
const read = async (url: string, deps?: ReadUrlDeps) => (await readUrl(deps).execute({ url }, ctx())) as PageText;

async function toolError(p: Promise<unknown>): Promise<string> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ToolError);
  const message = (err as ToolError).message;
  expect(message).not.toMatch(/\n|\bat .+:\d+:\d+/);
  return message;
}

describe("read_url", () => {
  it("returns the article's title and main text without navigation, ads, sidebars, scripts or footer", async () => {
    const page = await read(`${web.url}/article/1`);
    expect(page.url).toBe(`${web.url}/article/1`);
    expect(page.title).toBe("AI lab releases a 2-billion-parameter model that runs on laptops");
    expect(page.truncated).toBe(false);
    expect(page.text).toContain("A research lab on Wednesday released a small open model");
    expect(page.text).toContain("The weights are available under a permissive licence");
    for (const junk of [
      "BUY NOW",
      "Sponsored",
      "Most read",
      "Cookie settings",
      "All rights reserved",
      "Sign in",
      "tracking pixel",
      "dataLayer",
      "display: block",
    ]) {
      expect(page.text).not.toContain(junk);
    }
    // Paragraphs stay apart; runs of whitespace do not.
    expect(page.text.split("\n").length).toBeGreaterThanOrEqual(4);
    expect(page.text).not.toMatch(/ {2,}|\n\n/);
  });

  it("reference scenario: get_news, then read_url on the link the first result gave", async () => {
    const news = createGetNewsTool({ newsRssUrl: `${web.url}/rss?q={query}` });
    const items = (await news.execute({ topic: "AI" }, ctx())) as NewsItem[];
    const page = await read(items[0]!.link!);
    expect(page.title).toBe(items[0]!.title);
    expect(page.text).toContain("curated multilingual text");
  });

  it("reports the final URL after redirects", async () => {
    const page = await read(`${web.url}/redirect?to=${encodeURIComponent("/article/2")}`);
    expect(page.url).toBe(`${web.url}/article/2`);
    expect(page.text).toContain("Regulators published a draft");
  });

  it("decodes gzip and a charset declared only in a <meta> tag (GBK)", async () => {
    expect((await read(`${web.url}/gzip`)).text).toContain("A research lab on Wednesday");
    const gbk = await read(`${web.url}/gbk`);
    expect(gbk.title).toBe("北京天气");
    expect(gbk.text).toContain("thirty-one degrees");
  });

  it("returns plain text and JSON trimmed, and refuses binary content clearly", async () => {
    expect(await read(`${web.url}/text`)).toEqual({
      url: `${web.url}/text`,
      title: null,
      text: "Plain text\nwith extra spaces.\nSecond line.",
      truncated: false,
    });
    expect((await read(`${web.url}/json`)).text).toBe('{"status":"ok","items":[1,2,3],"note":"raw JSON"}');
    expect(await toolError(readUrl().execute({ url: `${web.url}/binary` }, ctx()))).toBe(
      `refused: ${web.url}/binary is image/png, not a web page (read_url reads HTML, plain text and JSON)`,
    );
    expect(await toolError(readUrl().execute({ url: `${web.url}/pdf` }, ctx()))).toMatch(
      /is application\/pdf, not a web page/,
    );
  });

  it("an HTTP error status is a clear error", async () => {
    expect(await toolError(readUrl().execute({ url: `${web.url}/article/99` }, ctx()))).toBe(
      `HTTP 404 from ${web.url}/article/99: the page could not be read`,
    );
  });

  it("cuts long text to the budget at a boundary and says so", async () => {
    const full = (await read(`${web.url}/article/1`)).text;
    const page = await read(`${web.url}/article/1`, { maxChars: 300 });
    expect(page.truncated).toBe(true);
    const [body, marker] = page.text.split("\n[… cut: ");
    expect(body!.length).toBeLessThanOrEqual(300);
    expect(body!.length).toBeGreaterThan(250);
    // Never half a word: the cut lands where the full text has a space, a line break or a sentence end.
    expect(full.startsWith(body!)).toBe(true);
    expect(full[body!.length]).toMatch(/[\s.]/);
    expect(marker).toBe(`showing the first ${body!.length} of ${full.length} characters]`);
    const cut = cutToBudget("一二三四五六七八九十。".repeat(100), 50);
    expect(cut.text.split("\n")[0]).toBe("一二三四五六七八九十。".repeat(4));
  });

  it("a huge page is read only up to the size cap and still answers quickly", async () => {
    const started = performance.now();
    const page = await read(`${web.url}/huge`, { maxBytes: 512 * 1024 });
    expect(page.truncated).toBe(true);
    expect(page.text.length).toBeLessThan(6_200);
    expect(page.text).toMatch(/\[… cut: showing the first \d+ of \d+ characters\]$/);
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it("times out a slow page with a clear message", async () => {
    expect(await toolError(readUrl({ timeoutMs: 300 }).execute({ url: `${web.url}/slow?ms=5000` }, ctx()))).toBe(
      `timed out after 0.3s fetching ${web.host}`,
    );
  });

  it("a page telling the model to fetch http://127.0.0.1:6379 gets a refusal, not Redis", async () => {
    const page = await read(`${web.url}/inject`);
    // The page is returned as data...
    const target = page.text.match(/http:\/\/127\.0\.0\.1:6379\/?/)?.[0];
    expect(target).toBeDefined();
    // ...and following its instruction is refused, even though the fake web host itself is allowed.
    expect(await toolError(readUrl().execute({ url: target! }, ctx()))).toBe(
      "refused: 127.0.0.1 is a loopback address",
    );

    // Prove nothing connects: a stand-in "Redis" on another loopback port counts connections.
    let connections = 0;
    const redisLike = net.createServer((s) => {
      connections++;
      s.end("-ERR\r\n");
    });
    await new Promise<void>((r) => redisLike.listen(0, "127.0.0.1", r));
    const port = (redisLike.address() as AddressInfo).port;
    try {
      for (const url of [
        `http://127.0.0.1:${port}/`,
        `http://localhost:${port}/`,
        `http://[::ffff:127.0.0.1]:${port}/`,
        `${web.url}/redirect?to=${encodeURIComponent(`http://127.0.0.1:${port}/`)}`,
      ]) {
        expect(await toolError(readUrl().execute({ url }, ctx()))).toMatch(/^refused: /);
      }
      expect(connections).toBe(0);
    } finally {
      await new Promise<void>((r) => redisLike.close(() => r()));
    }
  });

  it("refuses other schemes and assumes https when the scheme is missing", async () => {
    expect(await toolError(readUrl().execute({ url: "file:///etc/passwd" }, ctx()))).toMatch(
      /^refused: only http and https/,
    );
    const tool = readUrl({ lookup: async () => [{ address: "10.0.0.8", family: 4 }] });
    expect(await toolError(tool.execute({ url: "intranet.example/wiki" }, ctx()))).toBe(
      "refused: intranet.example resolves to a blocked address (10.0.0.8 is a private address)",
    );
  });

  it("sniffs HTML served without a Content-Type, and refuses unlabelled binary", async () => {
    let body: Buffer = Buffer.from(
      "<!DOCTYPE html><html><head><title>Bare</title></head><body><p>No content type here, but clearly a page.</p></body></html>",
    );
    const bare: Server = createServer((_req, res) => {
      res.removeHeader("Content-Type");
      res.writeHead(200, { "Content-Length": String(body.length) }).end(body);
    });
    await new Promise<void>((r) => bare.listen(0, "127.0.0.1", r));
    const host = `127.0.0.1:${(bare.address() as AddressInfo).port}`;
    try {
      const tool = createReadUrlTool({ allowHosts: [host], extractor, timeoutMs: 3_000 });
      const page = (await tool.execute({ url: `http://${host}/` }, ctx())) as PageText;
      expect(page).toMatchObject({ title: "Bare", text: "No content type here, but clearly a page." });
      body = Buffer.from([0x00, 0x01, 0x02, 0xff, 0x00]);
      expect(await toolError(tool.execute({ url: `http://${host}/` }, ctx()))).toMatch(
        /is binary data, not a web page/,
      );
    } finally {
      bare.closeAllConnections();
      await new Promise<void>((r) => bare.close(() => r()));
    }
  });
});

describe("HTML extraction stays bounded on hostile pages", () => {
  // 3000 nested divs keep Readability busy for tens of seconds; the deadline must cut that short.
  const deep = `<html><head><title>Deep</title></head><body>${"<div>".repeat(3_000)}<p>${"Deep words here. ".repeat(30)}</p>${"</div>".repeat(3_000)}</body></html>`;

  it("a pathological page falls back to the body text at the deadline, without blocking the main thread", async () => {
    const quick = createHtmlExtractor({ timeoutMs: 700, poolSize: 1 });
    try {
      // Warm the worker so the deadline measures extraction, not start-up.
      await quick.extract("<html><body><p>warm up</p></body></html>");
      let ticks = 0;
      const ticker = setInterval(() => ticks++, 20);
      const started = performance.now();
      const result = await quick.extract(deep);
      clearInterval(ticker);
      expect(performance.now() - started).toBeLessThan(1_500);
      expect(result).toMatchObject({ title: "Deep", method: "body" });
      expect(result.text).toContain("Deep words here.");
      // About 0.7 s passed; a blocked event loop would have ticked once or twice at most.
      expect(ticks).toBeGreaterThan(15);
      // The pool replaced the stopped worker: the next page is extracted normally.
      const next = await quick.extract(
        `<html><head><title>Next</title></head><body><article><p>${"Normal text. ".repeat(40)}</p></article></body></html>`,
      );
      expect(next).toMatchObject({ title: "Next", method: "readability" });
    } finally {
      await quick.close();
    }
  });

  it("aborting stops a running extraction", async () => {
    const quick = createHtmlExtractor({ timeoutMs: 10_000, poolSize: 1 });
    try {
      const ctrl = new AbortController();
      const pending = quick.extract(deep, { signal: ctrl.signal });
      setTimeout(() => ctrl.abort(), 100);
      const started = performance.now();
      await expect(pending).rejects.toThrow("aborted");
      expect(performance.now() - started).toBeLessThan(1_000);
    } finally {
      await quick.close();
    }
  });

  it("pages queue for a busy pool and each gets its own answer", async () => {
    const pool = createHtmlExtractor({ poolSize: 1 });
    try {
      const pages = ["One", "Two", "Three"].map(
        (t) =>
          `<html><head><title>${t}</title></head><body><article><p>${`${t} text. `.repeat(40)}</p></article></body></html>`,
      );
      const results = await Promise.all(pages.map((p) => pool.extract(p)));
      expect(results.map((r) => r.title)).toEqual(["One", "Two", "Three"]);
      expect(results[2]!.text).toContain("Three text.");
    } finally {
      await pool.close();
    }
  });
});
