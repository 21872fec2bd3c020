/** get_weather: current conditions for one city from a wttr.in-compatible JSON API, reduced to a few fields. */
import { z } from "zod";
import { backendFetch } from "./backend-fetch.js";
import { defineTool, type Tool } from "./tool.js";
import { ToolError } from "./tool-error.js";

/** Dependencies of get_weather. */
export interface GetWeatherDeps {
  /** WEATHER_API_BASE, e.g. "https://wttr.in". */
  weatherApiBase: string;
  fetch?: typeof fetch;
  timeoutMs?: number;
  maxBytes?: number;
}

/** What get_weather returns to the model. */
export interface WeatherReport {
  city: string;
  area: string | null;
  country: string | null;
  temperature_c: number | null;
  feels_like_c: number | null;
  humidity_pct: number | null;
  wind_kmph: number | null;
  wind_dir: string | null;
  description: string | null;
  description_zh?: string;
  /** Local time of the observation at the place, as the service reports it. */
  observed_at: string | null;
}

const weatherArgs = z.object({
  city: z
    .string()
    .trim()
    .min(1, { message: "give a city name" })
    .max(100, { message: "a city name is at most 100 characters" })
    // "." and ".." survive percent-encoding and are path steps to every URL parser: they would climb the backend's path.
    .refine((city) => city !== "." && city !== "..", { message: "give a city name, not a path" })
    .describe(
      'One city name, in English or Chinese, e.g. "Beijing", "上海", "London". For several cities, call get_weather once per city.',
    ),
});

/** Builds the get_weather tool. */
export function createGetWeatherTool(deps: GetWeatherDeps): Tool<typeof weatherArgs> {
  const timeoutMs = deps.timeoutMs ?? 8_000;
  const base = deps.weatherApiBase.replace(/\/+$/, "");
  return defineTool({
    name: "get_weather",
    description:
      "Get the current weather in one city: temperature (°C), feels-like temperature, humidity, wind and conditions. " +
      "Use it whenever the user asks about weather, temperature, rain or which place is hotter or colder. Never guess the weather.",
    schema: weatherArgs,
    timeoutMs: timeoutMs + 2_000,
    async execute({ city }, { signal }) {
      // The city is user text: it only ever enters the URL percent-encoded, as one path segment.
      const url = `${base}/${encodeURIComponent(city)}?format=j1`;
      const res = await backendFetch(url, {
        fetch: deps.fetch,
        service: "weather service",
        timeoutMs,
        maxBytes: deps.maxBytes ?? 512 * 1024,
        signal,
        accept: "application/json",
      });
      const unknown = () =>
        new ToolError(
          `unknown city "${city}": the weather service could not find it. Check the spelling or try the English name.`,
        );
      // wttr.in answers an unknown place with 404 (and, lately, the weather of some random place in the body).
      if (res.status === 404) throw unknown();
      if (res.status !== 200) throw new ToolError(`weather service error: HTTP ${res.status}`);
      let data: unknown;
      try {
        data = JSON.parse(res.text);
      } catch {
        // Older wttr.in: 200 with "Unknown location; please try ~lat,lon" as plain text.
        if (/unknown location/i.test(res.text)) throw unknown();
        throw new ToolError("weather service returned something that is not weather data");
      }
      return toReport(city, data, unknown);
    },
  });
}

function toReport(city: string, data: unknown, unknown: () => ToolError): WeatherReport {
  const doc = data as { current_condition?: Record<string, unknown>[]; nearest_area?: Record<string, unknown>[] };
  const current = Array.isArray(doc?.current_condition) ? doc.current_condition[0] : undefined;
  if (!current || typeof current !== "object") throw unknown();
  const area = Array.isArray(doc.nearest_area) ? doc.nearest_area[0] : undefined;
  const zh = wrapped(current.lang_zh);
  return {
    city,
    area: wrapped(area?.areaName),
    country: wrapped(area?.country),
    temperature_c: num(current.temp_C),
    feels_like_c: num(current.FeelsLikeC),
    humidity_pct: num(current.humidity),
    wind_kmph: num(current.windspeedKmph),
    wind_dir: str(current.winddir16Point),
    description: wrapped(current.weatherDesc),
    ...(zh ? { description_zh: zh } : {}),
    observed_at: str(current.localObsDateTime) ?? str(current.observation_time),
  };
}

/** wttr.in wraps text values as `[{ "value": "…" }]`. */
function wrapped(v: unknown): string | null {
  return Array.isArray(v) ? str((v[0] as { value?: unknown } | undefined)?.value) : null;
}

function num(v: unknown): number | null {
  const n = typeof v === "string" && v.trim() !== "" ? Number(v) : v;
  return typeof n === "number" && Number.isFinite(n) ? n : null;
}

function str(v: unknown): string | null {
  return typeof v === "string" && v.trim() !== "" ? v.trim() : null;
}
