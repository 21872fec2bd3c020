import { describe, expect } from "vitest";
import { e2eTest } from "../support/fixtures.js";

describe("fake web server", () => {
  e2eTest(
    "speaks wttr.in j1: real field shapes, 404 with a random place for unknown cities, lang_zh on request",
    async ({ web }) => {
      const res = await fetch(`${web.url}/${encodeURIComponent("上海")}?format=j1&lang=zh`);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("application/json");
      const doc = (await res.json()) as {
        current_condition: Record<string, unknown>[];
        nearest_area: Record<string, unknown>[];
        weather: unknown[];
      };
      expect(doc.current_condition[0]).toMatchObject({
        temp_C: "26",
        FeelsLikeC: "28",
        weatherDesc: [{ value: "Light rain" }],
        lang_zh: [{ value: "小雨" }],
      });
      expect(doc.nearest_area[0]).toMatchObject({ areaName: [{ value: "Shanghai" }], country: [{ value: "China" }] });
      expect(doc.weather).toHaveLength(3);
      const unknown = await fetch(`${web.url}/Atlantis?format=j1`);
      expect(unknown.status).toBe(404);
      expect(((await unknown.json()) as typeof doc).nearest_area[0]).toMatchObject({ country: [{ value: "Guyana" }] });
      expect(await (await fetch(`${web.url}/Antarctica?format=j1`)).text()).toMatch(/^Unknown location; please try ~/);
    },
  );

  e2eTest("logs each request with start and end times and honours per-route delays", async ({ web }) => {
    web.setDelay("/article", 100);
    const before = web.requests.length;
    await Promise.all([
      fetch(`${web.url}/article/1`).then((r) => r.text()),
      fetch(`${web.url}/article/2`).then((r) => r.text()),
    ]);
    web.setDelay("/article", 0);
    const [a, b] = web.requests.slice(before);
    expect(a!.endedAt! - a!.startedAt).toBeGreaterThanOrEqual(95);
    expect(a!.startedAt < b!.endedAt! && b!.startedAt < a!.endedAt!).toBe(true);
    expect(a!.status).toBe(200);
  });

  e2eTest("serves the RSS feed with links back to its own article pages", async ({ web }) => {
    const xml = await (await fetch(`${web.url}/rss?q=AI`)).text();
    expect(xml).toContain(`<link>${web.url}/article/1?q=AI&amp;oc=5</link>`);
    expect(xml).toContain('<source url="https://times.example">Example Times</source>');
  });
});
