/**
 * Tool arguments written by a model that a user or a page talked into mischief: they must not
 * steer a backend request anywhere but the one resource the tool is for.
 */
import { describe, expect } from "vitest";
import { createToolRunner } from "../../src/agent/tool-runner.js";
import { createGetWeatherTool } from "../../src/tools/get-weather.js";
import { e2eTest } from "../support/fixtures.js";

const weatherCall = (city: string) => ({
  id: "call_1",
  type: "function" as const,
  function: { name: "get_weather", arguments: JSON.stringify({ city }) },
});

describe("get_weather city as a path", () => {
  for (const city of ["..", ".", " .. "]) {
    e2eTest(
      `city ${JSON.stringify(city)} is refused before any request (it would climb the backend's path)`,
      async ({ web }) => {
        const runner = createToolRunner({
          tools: [createGetWeatherTool({ weatherApiBase: `${web.url}/api/v1/weather` })],
          defaultTimeoutMs: 5_000,
        });
        const outcome = await runner.run(weatherCall(city));
        expect(outcome.ok).toBe(false);
        expect(outcome.output).toMatch(/city/i);
        expect(outcome.output).toMatch(/not a path|city name/i);
        expect(web.requests).toEqual([]);
      },
    );
  }

  e2eTest(
    "a city that only contains dots among letters still asks the backend for that one segment",
    async ({ web }) => {
      const runner = createToolRunner({
        tools: [createGetWeatherTool({ weatherApiBase: web.url })],
        defaultTimeoutMs: 5_000,
      });
      await runner.run(weatherCall("St. Louis"));
      expect(web.requests.map((r) => r.path)).toEqual(["/St.%20Louis?format=j1"]);
    },
  );
});
