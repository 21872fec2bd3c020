/** The built-in tools as configured (the worker runs them; the bots role lists them in `/tools`). */
import type { Config } from "../config/env-schema.js";
import { createTools } from "../tools/index.js";
import type { Tool } from "../tools/tool.js";

/** Builds the built-in tools of this deployment (nothing connects until a tool runs). */
export function builtinToolsFor(config: Config): Tool[] {
  return createTools({
    weatherApiBase: config.WEATHER_API_BASE,
    newsRssUrl: config.NEWS_RSS_URL,
    allowHosts: config.READ_URL_ALLOW_HOSTS,
    timeoutMs: config.TOOL_TIMEOUT_MS,
  });
}
