/**
 * Tool arguments written by a model that a user or a page talked into mischief: they must not
 * steer a backend request anywhere but the one resource the tool is for.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createToolRunner } from "../../src/agent/tool-runner.js";
import { createGetWeatherTool } from "../../src/tools/get-weather.js";
import { startFakeWeb, type FakeWeb } from "../fakes/web-server.js";

let web: FakeWeb;
beforeAll(async () => {
  web = await startFakeWeb();
});
afterAll(async () => {
  await web.close();
});
afterEach(() => {
  web.requests.length = 0;
});

const weatherCall = (city: string) => ({ id: "call_1", type: "function" as const, function: { name: "get_weather", arguments: JSON.stringify({ city }) } });

describe("get_weather city as a path", () => {
  for (const city of ["..", ".", " .. "]) {
    it(`city ${JSON.stringify(city)} is refused before any request (it would climb the backend's path)`, async () => {
      const runner = createToolRunner({ tools: [createGetWeatherTool({ weatherApiBase: `${web.url}/api/v1/weather` })], defaultTimeoutMs: 5_000 });
      const outcome = await runner.run(weatherCall(city));
      expect(outcome.ok).toBe(false);
      expect(outcome.output).toMatch(/city/i);
      expect(outcome.output).toMatch(/not a path|city name/i);
      expect(web.requests).toEqual([]);
    });
  }

  it("a city that only contains dots among letters still asks the backend for that one segment", async () => {
    const runner = createToolRunner({ tools: [createGetWeatherTool({ weatherApiBase: web.url })], defaultTimeoutMs: 5_000 });
    await runner.run(weatherCall("St. Louis"));
    expect(web.requests.map((r) => r.path)).toEqual(["/St.%20Louis?format=j1"]);
  });
});
