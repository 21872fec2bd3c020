/** The bot's built-in tool set, built from configuration and injected I/O. */
import { createGetNewsTool } from "./get-news.js";
import { createGetTimeTool } from "./get-time.js";
import { createGetWeatherTool } from "./get-weather.js";
import { createReadUrlTool } from "./read-url.js";
import { createWebSearchTool } from "./web-search.js";
import type { HtmlExtractor } from "./html-extractor.js";
import type { Tool } from "./tool.js";

/** Everything the built-in tools need from the outside world. */
export interface ToolsDeps {
  weatherApiBase: string;
  /** NEWS_RSS_URL (a template with `{query}`). */
  newsRssUrl: string;
  /** SEARXNG_URL: web_search is offered only when set. */
  searxngUrl?: string;
  /** READ_URL_ALLOW_HOSTS: "host:port" pairs read_url may reach even when private. */
  allowHosts: readonly string[];
  now?: () => Date;
  /** Network deadline per call (default 10 s for read_url, 8 s for the backends). */
  timeoutMs?: number;
  /** The zone get_time uses when the model names none (default: the server's). */
  defaultTimeZone?: string;
  /** A shared HTML extractor (worker pool); by default read_url makes its own. */
  extractor?: HtmlExtractor;
}

/** get_weather, get_news, get_time, read_url, and web_search when SEARXNG_URL is set. */
export function createTools(deps: ToolsDeps): Tool[] {
  const { timeoutMs } = deps;
  return [
    createGetWeatherTool({ weatherApiBase: deps.weatherApiBase, timeoutMs }),
    createGetNewsTool({ newsRssUrl: deps.newsRssUrl, timeoutMs }),
    createGetTimeTool({ now: deps.now, defaultTimeZone: deps.defaultTimeZone }),
    createReadUrlTool({ allowHosts: deps.allowHosts, timeoutMs, extractor: deps.extractor }),
    ...(deps.searxngUrl ? [createWebSearchTool({ searxngUrl: deps.searxngUrl, timeoutMs })] : []),
  ];
}
