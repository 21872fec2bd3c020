/**
 * The bot's tool set: get_weather, get_news, get_time, read_url (and web_search with SEARXNG_URL),
 * built from configuration and injected I/O.
 */
import { createGetNewsTool } from "./get-news.js";
import { createGetTimeTool } from "./get-time.js";
import { createGetWeatherTool } from "./get-weather.js";
import { createReadUrlTool } from "./read-url.js";
import { createWebSearchTool } from "./web-search.js";
import type { HtmlExtractor } from "./html-extractor.js";
import type { ResolveHost } from "./dns-resolve.js";
import type { Connect } from "./safe-fetch.js";
import type { Tool } from "./tool.js";

/** Everything the four tools need from the outside world. */
export interface ToolsDeps {
  /** WEATHER_API_BASE. */
  weatherApiBase: string;
  /** NEWS_RSS_URL (a template with `{query}`). */
  newsRssUrl: string;
  /** SEARXNG_URL: web_search is offered only when set. */
  searxngUrl?: string;
  /** READ_URL_ALLOW_HOSTS: "host:port" pairs read_url may reach even when private. */
  allowHosts: readonly string[];
  /** For the weather and news backends (operator-configured URLs). */
  fetch?: typeof fetch;
  now?: () => Date;
  /** read_url's resolver (tests inject one; default: the system resolver). */
  lookup?: ResolveHost;
  /** read_url's socket factory (tests inject one; default: net/tls to the checked addresses). */
  connect?: Connect;
  /** Network deadline per call (default 10 s for read_url, 8 s for the backends). */
  timeoutMs?: number;
  /** The zone get_time uses when the model names none (default: the server's). */
  defaultTimeZone?: string;
  /** Characters of page text read_url returns at most (default 6000). */
  readUrlMaxChars?: number;
  /** Time read_url gives article extraction before using the plain body text (default 5 s). */
  extractTimeoutMs?: number;
  /** A shared HTML extractor (worker pool); by default read_url makes its own. */
  extractor?: HtmlExtractor;
}

/** The four tools, ready for the agent loop. */
export function createTools(deps: ToolsDeps): Tool[] {
  return [
    createGetWeatherTool({ weatherApiBase: deps.weatherApiBase, fetch: deps.fetch, timeoutMs: deps.timeoutMs }),
    createGetNewsTool({ newsRssUrl: deps.newsRssUrl, fetch: deps.fetch, timeoutMs: deps.timeoutMs }),
    createGetTimeTool({ now: deps.now, defaultTimeZone: deps.defaultTimeZone }),
    createReadUrlTool({
      allowHosts: deps.allowHosts,
      lookup: deps.lookup,
      connect: deps.connect,
      timeoutMs: deps.timeoutMs,
      maxChars: deps.readUrlMaxChars,
      extractTimeoutMs: deps.extractTimeoutMs,
      extractor: deps.extractor,
    }),
    ...(deps.searxngUrl
      ? [createWebSearchTool({ searxngUrl: deps.searxngUrl, fetch: deps.fetch, timeoutMs: deps.timeoutMs })]
      : []),
  ];
}

export { createGetNewsTool, newsFeedUrl, type GetNewsDeps, type NewsItem } from "./get-news.js";
export { createGetTimeTool, describeTime, resolveTimeZone, type GetTimeDeps, type TimeReport } from "./get-time.js";
export { createGetWeatherTool, type GetWeatherDeps, type WeatherReport } from "./get-weather.js";
export { createWebSearchTool, searchUrl, type SearchHit, type WebSearchDeps } from "./web-search.js";
export { createReadUrlTool, cutToBudget, type PageText, type ReadUrlDeps } from "./read-url.js";
export { createHtmlExtractor, type HtmlExtractor, type HtmlExtractorOptions } from "./html-extractor.js";
export type { ExtractedText } from "./extracted-text.js";
export {
  createSafeFetch,
  defaultConnect,
  pinnedLookup,
  SafeFetchError,
  systemResolveHost,
  type Connect,
  type ConnectTarget,
  type SafeFetch,
  type SafeFetchErrorCode,
  type SafeFetchInit,
  type SafeFetchOptions,
  type SafeResponse,
} from "./safe-fetch.js";
export type { ResolvedAddress, ResolveHost } from "./dns-resolve.js";
export { checkAddress, checkHostName, parseIpLiteral, type AddressVerdict } from "./ip-policy.js";
export { ToolError } from "./tool-error.js";
export {
  defineTool,
  isJsonSchemaTool,
  toOpenAiTool,
  type AgentTool,
  type ArgumentCheck,
  type JsonSchemaTool,
  type Tool,
  type ToolContext,
} from "./tool.js";
