/**
 * Pages a hostile or sloppy site serves without `<head>`/`<body>`: read_url must still give the
 * model their text instead of "no readable text" (a fragment is a page too).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHtmlExtractor, type HtmlExtractor } from "../../src/tools/html-extractor.js";
import { createReadUrlTool, type PageText } from "../../src/tools/read-url.js";

const PAGES: Record<string, string> = {
  "/fragment": "<p>The harbour bridge reopened on Monday after repairs.</p><p>Traffic is back to normal.</p>",
  "/doctype-only": "<!DOCTYPE html><p>Rain is expected in the north this afternoon.</p>",
  "/no-head":
    "<html><title>Council votes on the budget</title><body><p>The council approved the budget by nine votes to four.</p>",
  "/plain": "Just a line of text served as HTML, with no markup at all.",
};

let server: Server;
let base: string;
let host: string;
let extractor: HtmlExtractor;

beforeAll(async () => {
  server = createServer((req, res) => {
    const page = PAGES[req.url ?? ""];
    res.writeHead(page ? 200 : 404, { "content-type": "text/html; charset=utf-8" });
    res.end(page ?? "not found");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  base = `http://${host}`;
  extractor = createHtmlExtractor();
});
afterAll(async () => {
  await extractor.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const read = async (path: string) =>
  (await createReadUrlTool({ allowHosts: [host], extractor, timeoutMs: 3_000 }).execute(
    { url: `${base}${path}` },
    { signal: new AbortController().signal },
  )) as PageText;

describe("read_url on pages without head or body", () => {
  it("a bare fragment gives its paragraphs", async () => {
    const page = await read("/fragment");
    expect(page.text).toBe("The harbour bridge reopened on Monday after repairs.\nTraffic is back to normal.");
  });

  it("a doctype followed by a paragraph gives the paragraph", async () => {
    expect((await read("/doctype-only")).text).toBe("Rain is expected in the north this afternoon.");
  });

  it("<html><title>…<body> gives the title as the title and the body text without it", async () => {
    const page = await read("/no-head");
    expect(page.title).toBe("Council votes on the budget");
    expect(page.text).toBe("The council approved the budget by nine votes to four.");
  });

  it("text with no markup at all is read as text", async () => {
    expect((await read("/plain")).text).toBe("Just a line of text served as HTML, with no markup at all.");
  });
});
