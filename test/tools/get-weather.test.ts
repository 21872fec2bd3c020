import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect } from "vitest";
import { createGetWeatherTool, type WeatherReport } from "../../src/tools/get-weather.js";
import { ToolError } from "../../src/tools/tool-error.js";
import { e2eTest } from "../support/fixtures.js";

const ctx = () => ({ signal: new AbortController().signal });

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, "127.0.0.1", r));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((r) => probe.close(() => r()));
  return port;
}

async function toolError(p: Promise<unknown>): Promise<string> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ToolError);
  return (err as ToolError).message;
}

describe("get_weather", () => {
  e2eTest("returns structured current weather for a Chinese city name, asking wttr.in's j1 format", async ({ web }) => {
    const tool = createGetWeatherTool({ weatherApiBase: web.url });
    const report = await tool.execute({ city: "北京" }, ctx());
    expect(report).toEqual({
      city: "北京",
      area: "Beijing",
      country: "China",
      temperature_c: 31,
      feels_like_c: 33,
      humidity_pct: 28,
      wind_kmph: 11,
      wind_dir: "SW",
      description: "Sunny",
      observed_at: "2025-06-18 02:40 PM",
    });
    expect(web.requests[0]?.path).toBe(`/${encodeURIComponent("北京")}?format=j1`);
  });

  e2eTest("gives different cities their own numbers (北京 is hotter than 上海)", async ({ web }) => {
    const tool = createGetWeatherTool({ weatherApiBase: `${web.url}/` });
    const [beijing, shanghai] = (await Promise.all([
      tool.execute({ city: "北京" }, ctx()),
      tool.execute({ city: "上海" }, ctx()),
    ])) as WeatherReport[];
    expect(beijing!.temperature_c).toBeGreaterThan(shanghai!.temperature_c!);
    expect(shanghai).toMatchObject({ area: "Shanghai", description: "Light rain", humidity_pct: 83 });
  });

  e2eTest("runs concurrent calls in parallel (their requests overlap in time)", async ({ web }) => {
    web.setDelay("/", 150);
    const tool = createGetWeatherTool({ weatherApiBase: web.url });
    await Promise.all([tool.execute({ city: "Beijing" }, ctx()), tool.execute({ city: "Shanghai" }, ctx())]);
    const [a, b] = web.requests;
    expect(a!.startedAt).toBeLessThan(b!.endedAt!);
    expect(b!.startedAt).toBeLessThan(a!.endedAt!);
  });

  e2eTest("keeps user text inside one encoded path segment", async ({ web }) => {
    const tool = createGetWeatherTool({ weatherApiBase: web.url });
    await toolError(tool.execute({ city: "../rss?q=x&format=j1#" }, ctx()));
    expect(web.requests[0]?.path).toBe("/..%2Frss%3Fq%3Dx%26format%3Dj1%23?format=j1");
  });

  e2eTest("reads the Chinese description when the service sends one", async ({ web }) => {
    const tool = createGetWeatherTool({ weatherApiBase: `${web.url}` });
    // An operator may point the base at a proxy that adds lang=zh; simulate with a fake fetch that rewrites the URL.
    const zhFetch: typeof fetch = (input, init) => fetch(`${String(input)}&lang=zh`, init);
    const zh = createGetWeatherTool({ weatherApiBase: web.url, fetch: zhFetch });
    expect(((await zh.execute({ city: "Shanghai" }, ctx())) as WeatherReport).description_zh).toBe("小雨");
    expect(((await tool.execute({ city: "Shanghai" }, ctx())) as WeatherReport).description_zh).toBeUndefined();
  });

  e2eTest("an unknown city (wttr.in's 404 with some random place in the body) is a clear error", async ({ web }) => {
    const tool = createGetWeatherTool({ weatherApiBase: web.url });
    expect(await toolError(tool.execute({ city: "Atlantis" }, ctx()))).toBe(
      'unknown city "Atlantis": the weather service could not find it. Check the spelling or try the English name.',
    );
  });

  e2eTest(
    "the older 200 'Unknown location; please try ~lat,lon' text is the same clear error, not a JSON crash",
    async ({ web }) => {
      const tool = createGetWeatherTool({ weatherApiBase: web.url });
      expect(await toolError(tool.execute({ city: "Antarctica" }, ctx()))).toMatch(/^unknown city "Antarctica"/);
    },
  );

  // The worker calls the backends through Node's global fetch (the default).
  const clients: [string, typeof fetch | undefined][] = [["the platform's fetch", undefined]];
  for (const [client, fetchFn] of clients) {
    const withClient = fetchFn ? { fetch: fetchFn } : {};
    e2eTest(
      `server errors, bad JSON, timeouts and a dead backend each get their own short message (${client})`,
      async ({ web }) => {
        let mode: "500" | "garbage" | "empty" = "500";
        const backend: Server = createServer((_req, res) => {
          if (mode === "500") res.writeHead(500, { "content-type": "text/html" }).end("<h1>Internal Server Error</h1>");
          else if (mode === "garbage")
            res.writeHead(200, { "content-type": "application/json" }).end("<html>oops</html>");
          else
            res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ current_condition: [] }));
        });
        await new Promise<void>((r) => backend.listen(0, "127.0.0.1", r));
        const base = `http://127.0.0.1:${(backend.address() as AddressInfo).port}`;
        try {
          const tool = createGetWeatherTool({ weatherApiBase: base, ...withClient });
          expect(await toolError(tool.execute({ city: "Paris" }, ctx()))).toBe("weather service error: HTTP 500");
          mode = "garbage";
          expect(await toolError(tool.execute({ city: "Paris" }, ctx()))).toBe(
            "weather service returned something that is not weather data",
          );
          mode = "empty";
          expect(await toolError(tool.execute({ city: "Paris" }, ctx()))).toMatch(/^unknown city "Paris"/);
        } finally {
          backend.closeAllConnections();
          await new Promise<void>((r) => backend.close(() => r()));
        }
        const dead = createGetWeatherTool({ weatherApiBase: `http://127.0.0.1:${await closedPort()}`, ...withClient });
        expect(await toolError(dead.execute({ city: "Paris" }, ctx()))).toBe(
          "weather service is unreachable (connection refused)",
        );

        web.setDelay("/", 2_000);
        const slow = createGetWeatherTool({ weatherApiBase: web.url, timeoutMs: 200, ...withClient });
        expect(await toolError(slow.execute({ city: "Beijing" }, ctx()))).toBe("weather service timed out after 0.2s");
      },
    );

    e2eTest(`stops reading an oversized answer at the cap (${client})`, async ({ web }) => {
      const tool = createGetWeatherTool({ weatherApiBase: web.url, maxBytes: 1_000, ...withClient });
      // The j1 document is far larger than 1 KB: cut JSON does not parse, and the model is told so.
      expect(await toolError(tool.execute({ city: "London" }, ctx()))).toBe(
        "weather service returned something that is not weather data",
      );
    });
  }

  e2eTest("the schema refuses an empty city with a reason the model can act on", ({ web }) => {
    const tool = createGetWeatherTool({ weatherApiBase: web.url });
    const parsed = tool.schema.safeParse({ city: "   " });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.message).toBe("give a city name");
    expect(tool.schema.parse({ city: "  London " })).toEqual({ city: "London" });
  });
});
