/**
 * The two reference scenarios (parallel weather calls; news then read_url) with the bot's REAL tools (createTools) over real HTTP
 * to the fake web server (wttr-style weather, a news RSS feed, article pages): what the model is
 * sent each round, and what the tools fetched and when.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTools } from "../../src/tools/index.js";
import { startFakeOpenAI, textAnswer, toolCallAnswer, type FakeOpenAI } from "../fakes/openai-server.js";
import { startFakeWeb, type FakeWeb } from "../fakes/web-server.js";
import { agentDeps, collect, finishOf, user } from "./agent-harness.js";

let model: FakeOpenAI;
let web: FakeWeb;

beforeEach(async () => {
  model = await startFakeOpenAI();
  web = await startFakeWeb();
});
afterEach(async () => {
  await model.close();
  await web.close();
});

const realTools = () =>
  createTools({
    weatherApiBase: web.url,
    newsRssUrl: `${web.url}/rss?q={query}`,
    allowHosts: [web.host],
    timeoutMs: 5000,
  });

const toolMessages = (request: FakeOpenAI["requests"][number] | undefined) =>
  (request?.body.messages ?? [])
    .filter((m) => m.role === "tool")
    .map((m) => JSON.parse(m.content as string) as unknown);

describe("reference scenarios with the real tools", () => {
  it("北京和上海今天哪里更热？ → two get_weather calls fetched in parallel, then the answer from their observations", async () => {
    web.setDelay("/", 150); // every backend answer takes 150 ms, so overlap is visible in the server's log
    model.script([
      toolCallAnswer(
        [
          { name: "get_weather", arguments: { city: "北京" } },
          { name: "get_weather", arguments: { city: "上海" } },
        ],
        { interleave: true },
      ),
      (request) => {
        const [a, b] = toolMessages(request) as { city: string; temperature_c: number }[];
        const hotter = a!.temperature_c >= b!.temperature_c ? a! : b!;
        return textAnswer(`今天${hotter.city}更热（${hotter.temperature_c}°C）。`);
      },
    ]);
    const events = await collect(agentDeps(model.url, realTools()), [user("北京和上海今天哪里更热？")]);

    const fetched = web.requests.filter((r) => r.query.get("format") === "j1");
    expect(fetched.map((r) => r.pathname).sort()).toEqual(["/上海", "/北京"]);
    const [first, second] = fetched as [(typeof fetched)[number], (typeof fetched)[number]];
    // The second request reached the server before the first one was answered: the calls ran concurrently.
    expect(second.startedAt).toBeLessThan(first.endedAt!);

    const observations = toolMessages(model.requests[1]) as { city: string; temperature_c: number }[];
    expect(observations.map((o) => o.city).sort()).toEqual(["上海", "北京"]);
    const finish = finishOf(events);
    expect(finish.reason).toBe("stop");
    expect(finish.text).toMatch(/^今天(北京|上海)更热（\d+°C）。$/);
    const hottest = observations.reduce((x, y) => (x.temperature_c >= y.temperature_c ? x : y));
    expect(finish.text).toContain(hottest.city);
  });

  it("今天 AI 新闻里第一条的正文 → get_news, then read_url with the first result's link, then the article's text", async () => {
    let firstLink = "";
    model.script([
      toolCallAnswer([{ name: "get_news", arguments: { topic: "AI" } }]),
      (request) => {
        const items = toolMessages(request)[0] as { title: string; link: string }[];
        firstLink = items[0]!.link;
        return toolCallAnswer([{ name: "read_url", arguments: { url: firstLink } }]);
      },
      (request) => {
        const page = toolMessages(request).at(-1) as { title: string; text: string };
        return textAnswer(`第一条：${page.title}`);
      },
    ]);
    const events = await collect(agentDeps(model.url, realTools()), [user("今天 AI 新闻里第一条的正文")]);

    expect(web.requests.find((r) => r.pathname === "/rss")?.query.get("q")).toBe("AI");
    // read_url fetched exactly the page the model read from the first news item.
    expect(firstLink.startsWith(web.url)).toBe(true);
    expect(web.requests.map((r) => `${web.url}${r.path}`)).toContain(firstLink);
    const page = toolMessages(model.requests[2]).at(-1) as { url: string; title: string; text: string };
    expect(page.url).toBe(firstLink);
    expect(page.text.length).toBeGreaterThan(200);
    // Readability kept the story and dropped the page's navigation, ads and footer.
    expect(page.text).not.toMatch(/cookie|subscribe|advertisement/i);
    const finish = finishOf(events);
    expect(finish.reason).toBe("stop");
    expect(finish.rounds).toBe(3);
    expect(finish.text).toBe(`第一条：${page.title}`);
  });
});
