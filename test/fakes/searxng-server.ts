/**
 * A fake SearXNG on 127.0.0.1 (port 0), speaking real HTTP the way the real one does:
 * - `GET /search?q=…&format=json`: `application/json` with SearXNG's answer shape (`query`,
 *   `number_of_results`, `results[]` of `{url, title, content, engine, engines, score, category, …}`,
 *   `answers`, `corrections`, `infoboxes`, `suggestions`, `unresponsive_engines`). Result URLs point at
 *   `articleBase` (the fake web's `/article/N`), so search → read_url can be followed.
 * - `format=json` while `json` is not in `search.formats` (`jsonEnabled: false`): Flask's HTML 403 page,
 *   which is what `flask.abort(403)` in searx/webapp.py sends.
 * - No `format` (or `format=html`): an HTML results page. `q=nothing-found` gives an empty results list.
 * `setDelay(ms)` holds every answer; every request is logged.
 */
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";

/** Options of the fake. */
export interface FakeSearxngOptions {
  /** Where result URLs point (`${articleBase}/article/N`). */
  articleBase: string;
  /** False = `json` missing from `search.formats` (the default settings.yml of SearXNG). */
  jsonEnabled?: boolean;
}

/** A running fake SearXNG. */
export interface FakeSearxng {
  url: string;
  requests: { path: string; query: URLSearchParams; headers: IncomingMessage["headers"] }[];
  setDelay(ms: number): void;
  close(): Promise<void>;
}

const FORBIDDEN_HTML =
  "<!doctype html>\n<html lang=en>\n<title>403 Forbidden</title>\n<h1>Forbidden</h1>\n<p>You don&#39;t have the permission to access the requested resource. It is either read-protected or not readable by the server.</p>\n";

/** Starts the fake. */
export async function startFakeSearxng(options: FakeSearxngOptions): Promise<FakeSearxng> {
  let delayMs = 0;
  const requests: FakeSearxng["requests"] = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://searxng.local");
    requests.push({ path: req.url ?? "/", query: url.searchParams, headers: req.headers });
    const answer = () => {
      if (url.pathname !== "/search" && url.pathname !== "/") {
        res.writeHead(404, { "content-type": "text/html; charset=utf-8" }).end("<h1>Not Found</h1>");
        return;
      }
      const q = url.searchParams.get("q") ?? "";
      const format = url.searchParams.get("format") ?? "html";
      if (format === "json" && options.jsonEnabled === false) {
        res.writeHead(403, { "content-type": "text/html; charset=utf-8" }).end(FORBIDDEN_HTML);
        return;
      }
      if (format !== "json") {
        res
          .writeHead(200, { "content-type": "text/html; charset=utf-8" })
          .end(
            `<!DOCTYPE html><html><head><title>${q} - SearXNG</title></head><body><div id="results"></div></body></html>`,
          );
        return;
      }
      const results = q === "nothing-found" ? [] : resultsFor(q, options.articleBase);
      const body = {
        query: q,
        number_of_results: 0,
        results,
        answers: [],
        corrections: [],
        infoboxes: [],
        suggestions: [`${q} news`, `${q} wiki`],
        unresponsive_engines: [["brave", "timeout"]],
      };
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
    };
    if (delayMs > 0) setTimeout(answer, delayMs);
    else answer();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    setDelay(ms) {
      delayMs = ms;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

function resultsFor(q: string, base: string): Record<string, unknown>[] {
  const pages = [
    {
      title: `${q} - Wikipedia`,
      content: `${q} is a topic with a long history.   It is described here in detail, `.repeat(8),
    },
    { title: `What is new in ${q}`, content: `The latest about ${q}: a release, a change and a plan.` },
    { title: `${q} explained`, content: `A short guide to ${q}.` },
    { title: `${q} forum thread`, content: null },
    { title: `${q} on the news`, content: `Headlines about ${q}.` },
    { title: `${q} archive`, content: `Older pages about ${q}.` },
    { title: `${q} images`, content: "" },
  ];
  return pages.map((page, i) => {
    const url = `${base}/article/${i + 1}`;
    const parsed = new URL(url);
    return {
      url,
      title: page.title,
      content: page.content,
      publishedDate: null,
      thumbnail: "",
      engine: i % 2 ? "duckduckgo" : "google",
      template: "default.html",
      parsed_url: [parsed.protocol.replace(":", ""), parsed.host, parsed.pathname, "", "", ""],
      img_src: "",
      priority: "",
      engines: ["google", "duckduckgo"],
      positions: [i + 1],
      score: 10 / (i + 1),
      category: "general",
    };
  });
}
