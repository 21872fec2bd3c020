/**
 * web_search against a fake SearXNG over real HTTP: what the tool returns, what the model is sent
 * (tool list, system rule, observations), search → read_url with the real read_url, and the clear
 * observations for a SearXNG that is down, slow, refuses JSON or answers HTML.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTools } from "../../src/tools/index.js";
import { createWebSearchTool, searchUrl, type SearchHit } from "../../src/tools/web-search.js";
import { ToolError } from "../../src/tools/tool-error.js";
import { agentDeps, collect, finishOf, user } from "../agent/agent-harness.js";
import { startFakeOpenAI, textAnswer, toolCallAnswer, type FakeOpenAI } from "../fakes/openai-server.js";
import { startFakeSearxng, type FakeSearxng } from "../fakes/searxng-server.js";
import { startFakeWeb, type FakeWeb } from "../fakes/web-server.js";
import { refusedBaseUrl } from "../fakes/openai-server.js";

const ctx = () => ({ signal: new AbortController().signal });

let web: FakeWeb;
let searxng: FakeSearxng;
let model: FakeOpenAI;

beforeEach(async () => {
  web = await startFakeWeb();
  searxng = await startFakeSearxng({ articleBase: web.url });
  model = await startFakeOpenAI();
});
afterEach(async () => {
  await model.close();
  await searxng.close();
  await web.close();
});

async function observation(p: Promise<unknown>): Promise<string> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ToolError);
  return (err as ToolError).message;
}

const toolMessages = (request: FakeOpenAI["requests"][number] | undefined) =>
  (request?.body.messages ?? []).filter((m) => m.role === "tool").map((m) => m.content as string);

describe("web_search", () => {
  it("asks SearXNG for JSON and returns five short {title, url, snippet}", async () => {
    const tool = createWebSearchTool({ searxngUrl: searxng.url });
    const hits = (await tool.execute({ query: "qwen3 & tools?" }, ctx())) as SearchHit[];
    expect(searxng.requests[0]?.query.get("q")).toBe("qwen3 & tools?");
    expect(searxng.requests[0]?.query.get("format")).toBe("json");
    expect(hits).toHaveLength(5);
    expect(hits[0]?.title).toBe("qwen3 & tools? - Wikipedia");
    expect(hits[0]?.url).toBe(`${web.url}/article/1`);
    // A long, spaced snippet is one line of at most 200 characters ending in an ellipsis.
    expect(hits[0]?.snippet.length).toBeLessThanOrEqual(200);
    expect(hits[0]?.snippet.endsWith("…")).toBe(true);
    expect(hits[0]?.snippet).not.toMatch(/\s{2}/);
    // A result without content keeps an empty snippet rather than null.
    expect(hits[3]).toEqual({ title: "qwen3 & tools? forum thread", url: `${web.url}/article/4`, snippet: "" });
    for (const hit of hits) expect(Object.keys(hit).sort()).toEqual(["snippet", "title", "url"]);
    expect(searchUrl("http://s.example/searx/", "a b")).toBe("http://s.example/searx/search?q=a+b&format=json");
  });

  it("is offered only with SEARXNG_URL, and the system prompt's search rule comes with it", async () => {
    const base = { weatherApiBase: web.url, newsRssUrl: `${web.url}/rss?q={query}`, allowHosts: [web.host] };
    expect(createTools(base).map((t) => t.name)).not.toContain("web_search");
    expect(createTools({ ...base, searxngUrl: searxng.url }).map((t) => t.name)).toContain("web_search");

    model.script([textAnswer("hi"), textAnswer("hi")]);
    await collect(agentDeps(model.url, createTools(base)), [user("hello")]);
    await collect(agentDeps(model.url, createTools({ ...base, searxngUrl: searxng.url })), [user("hello")]);
    const systemOf = (i: number) => model.requests[i]?.body.messages?.[0]?.content as string;
    expect(systemOf(0)).not.toContain("web_search");
    expect(systemOf(1)).toContain("call web_search, then call read_url");
    // The rule is added after the others: what both prompts share stays a common prefix.
    const [without, withSearch] = [systemOf(0), systemOf(1)];
    const rulesEnd = without.indexOf("\n\nAlways reply");
    expect(withSearch.startsWith(without.slice(0, rulesEnd))).toBe(true);
  });

  it("search → read_url: the model reads the page of the result it picked", async () => {
    const tools = createTools({
      weatherApiBase: web.url,
      newsRssUrl: `${web.url}/rss?q={query}`,
      allowHosts: [web.host],
      searxngUrl: searxng.url,
      timeoutMs: 5000,
    });
    let picked = "";
    model.script([
      toolCallAnswer([{ name: "web_search", arguments: { query: "small language models" } }]),
      (request) => {
        const hits = JSON.parse(toolMessages(request)[0]!) as SearchHit[];
        picked = hits[1]!.url;
        return toolCallAnswer([{ name: "read_url", arguments: { url: picked } }]);
      },
      (request) => {
        const page = JSON.parse(toolMessages(request).at(-1)!) as { title: string; text: string };
        return textAnswer(`From ${page.title}: ${page.text.slice(0, 40)}`);
      },
    ]);
    const events = await collect(agentDeps(model.url, tools), [user("what's new with small language models?")]);
    expect(picked).toBe(`${web.url}/article/2`);
    expect(web.requests.map((r) => r.pathname)).toContain("/article/2");
    const finish = finishOf(events);
    expect(finish.reason).toBe("stop");
    expect(finish.rounds).toBe(3);
    expect(finish.text).toMatch(/^From .+: .+/);
  });

  it("down, slow, JSON not enabled, HTML or an empty list each give one clear observation", async () => {
    const down = createWebSearchTool({ searxngUrl: await refusedBaseUrl() });
    expect(await observation(down.execute({ query: "x" }, ctx()))).toMatch(/^search service is unreachable \(.+\)$/);

    searxng.setDelay(2_000);
    const slow = createWebSearchTool({ searxngUrl: searxng.url, timeoutMs: 200 });
    expect(await observation(slow.execute({ query: "x" }, ctx()))).toBe("search service timed out after 0.2s");
    searxng.setDelay(0);

    const noJson = await startFakeSearxng({ articleBase: web.url, jsonEnabled: false });
    try {
      expect(await observation(createWebSearchTool({ searxngUrl: noJson.url }).execute({ query: "x" }, ctx()))).toBe(
        "search service refused JSON (HTTP 403): enable json in its search.formats",
      );
    } finally {
      await noJson.close();
    }

    // A proxy or a wrong URL that answers an HTML page with 200.
    const html = createServer((_req, res) =>
      res.writeHead(200, { "content-type": "text/html" }).end("<!DOCTYPE html><html><body>Login</body></html>"),
    );
    await new Promise<void>((r) => html.listen(0, "127.0.0.1", r));
    try {
      const tool = createWebSearchTool({ searxngUrl: `http://127.0.0.1:${(html.address() as AddressInfo).port}` });
      expect(await observation(tool.execute({ query: "x" }, ctx()))).toBe(
        "search service did not return JSON (is format=json enabled?)",
      );
    } finally {
      html.closeAllConnections();
      await new Promise<void>((r) => html.close(() => r()));
    }

    const tool = createWebSearchTool({ searxngUrl: searxng.url });
    expect(await observation(tool.execute({ query: "nothing-found" }, ctx()))).toBe(
      'no web results for "nothing-found"; try other or fewer words',
    );
  });

  it("a failing search reaches the model as its observation, and the answer still comes", async () => {
    searxng.setDelay(2_000);
    const tool = createWebSearchTool({ searxngUrl: searxng.url, timeoutMs: 200 });
    model.script([
      toolCallAnswer([{ name: "web_search", arguments: { query: "x" } }]),
      (request) => textAnswer(`Search failed: ${toolMessages(request)[0]}`),
    ]);
    const finish = finishOf(await collect(agentDeps(model.url, [tool]), [user("search x")]));
    expect(finish.text).toContain("search service timed out after 0.2s");
  });
});
