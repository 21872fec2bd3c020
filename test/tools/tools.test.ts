import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createHtmlExtractor, type HtmlExtractor } from "../../src/tools/html-extractor.js";
import { createTools } from "../../src/tools/index.js";
import { toOpenAiTool, type Tool } from "../../src/tools/tool.js";
import { startFakeWeb, type FakeWeb } from "../fakes/web-server.js";

let web: FakeWeb;
let extractor: HtmlExtractor;
let tools: Tool[];
const ctx = () => ({ signal: new AbortController().signal });

beforeAll(async () => {
  web = await startFakeWeb();
  extractor = createHtmlExtractor();
  tools = createTools({
    weatherApiBase: web.url,
    newsRssUrl: `${web.url}/rss?q={query}`,
    allowHosts: [web.host],
    now: () => new Date("2025-06-18T06:40:00Z"),
    defaultTimeZone: "Asia/Shanghai",
    extractor,
  });
});
afterAll(async () => {
  await extractor.close();
  await web.close();
});

const byName = (name: string) => tools.find((t) => t.name === name)!;

describe("createTools", () => {
  it("builds the four built-in tools, each with a per-tool timeout for network work", () => {
    expect(tools.map((t) => t.name)).toEqual(["get_weather", "get_news", "get_time", "read_url"]);
    for (const name of ["get_weather", "get_news", "read_url"]) expect(byName(name).timeoutMs).toBeGreaterThan(0);
  });

  it("every tool works end to end against the fake web", async () => {
    expect(await byName("get_weather").execute({ city: "上海" }, ctx())).toMatchObject({ temperature_c: 26 });
    expect(await byName("get_news").execute({ topic: "AI" }, ctx())).toHaveLength(8);
    expect(await byName("get_time").execute({}, ctx())).toMatchObject({
      timezone: "Asia/Shanghai",
      iso: "2025-06-18T14:40:00+08:00",
    });
    expect(await byName("read_url").execute({ url: `${web.url}/article/3` }, ctx())).toMatchObject({
      title: "Chipmaker shares climb on AI demand",
    });
  });
});

describe("toOpenAiTool", () => {
  const required: Record<string, string[]> = {
    get_weather: ["city"],
    get_news: ["topic"],
    get_time: [],
    read_url: ["url"],
  };
  const valid: Record<string, unknown> = {
    get_weather: { city: "北京" },
    get_news: { topic: "AI" },
    get_time: { timezone: "UTC" },
    read_url: { url: "https://example.com/" },
  };

  it("gives each tool a valid JSON Schema object with described, typed fields and the right required list", () => {
    for (const tool of tools) {
      const spec = toOpenAiTool(tool);
      // What goes over the wire: plain JSON, no $schema, a function with a name and a description.
      expect(JSON.parse(JSON.stringify(spec))).toEqual(spec);
      expect(spec.type).toBe("function");
      expect(spec.function.name).toMatch(/^[a-z_]+$/);
      expect(spec.function.description.length).toBeGreaterThan(40);
      const params = spec.function.parameters as {
        type: string;
        properties: Record<string, { type: string; description?: string }>;
        required?: string[];
      };
      expect(params).not.toHaveProperty("$schema");
      expect(params.type).toBe("object");
      expect(params.required ?? []).toEqual(required[tool.name]);
      for (const [field, schema] of Object.entries(params.properties)) {
        expect(schema.type, `${tool.name}.${field}`).toBe("string");
        expect(schema.description?.length, `${tool.name}.${field} description`).toBeGreaterThan(20);
      }
      // A JSON Schema that a validator accepts and that means what the zod schema means.
      const roundTrip = z.fromJSONSchema(params as never);
      expect(roundTrip.safeParse(valid[tool.name]).success, tool.name).toBe(true);
      if ((required[tool.name] ?? []).length > 0) expect(roundTrip.safeParse({}).success, tool.name).toBe(false);
      expect(
        roundTrip.safeParse({ ...(valid[tool.name] as object), [Object.keys(params.properties)[0]!]: 42 }).success,
      ).toBe(false);
    }
  });

  it("zod validation names the field and why, for the loop to send back", () => {
    const weather = byName("get_weather");
    const bad = weather.schema.safeParse({ city: 7 });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues[0]?.path).toEqual(["city"]);
    expect(byName("read_url").schema.safeParse({ url: "x".repeat(3000) }).error?.issues[0]?.message).toBe(
      "a URL is at most 2048 characters",
    );
  });
});
