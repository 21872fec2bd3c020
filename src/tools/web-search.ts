/** web_search: a self-hosted SearXNG's JSON API, answered as a few `{title, url, snippet}` for a small model. */
import { z } from "zod";
import { cutText } from "../shared/text-cut.js";
import { backendFetch } from "./backend-fetch.js";
import { defineTool, type Tool } from "./tool.js";
import { ToolError } from "./tool-error.js";

/** One search hit as the model sees it. */
export interface SearchHit {
  title: string;
  url: string;
  snippet: string;
}

/** Dependencies of web_search. */
export interface WebSearchDeps {
  /** SEARXNG_URL: the instance's base URL (its `search.formats` must include `json`). */
  searxngUrl: string;
  timeoutMs?: number;
}

/** Hits returned: a 1.7B model reads a short list best. */
const MAX_RESULTS = 5;
const MAX_SNIPPET_CHARS = 200;

const searchArgs = z.object({
  query: z
    .string()
    .trim()
    .min(1, { message: "give words to search for" })
    .max(300, { message: "a query is at most 300 characters" })
    .describe('What to search the web for, in a few words, e.g. "node 22 release date".'),
});

/** The part of SearXNG's JSON answer we read; the rest (engines, scores, infoboxes) is dropped. */
const searxngAnswer = z.object({
  results: z.array(
    z.looseObject({
      url: z.string().optional(),
      title: z.string().optional(),
      content: z.string().nullish(),
    }),
  ),
});

/** Builds the web_search tool. */
export function createWebSearchTool(deps: WebSearchDeps): Tool<typeof searchArgs> {
  const timeoutMs = deps.timeoutMs ?? 8_000;
  return defineTool({
    name: "web_search",
    description:
      "Search the web. Returns a JSON list of {title, url, snippet}, best first. " +
      "To read a page's text, call read_url with its url.",
    schema: searchArgs,
    timeoutMs: timeoutMs + 2_000,
    async execute({ query }, { signal }) {
      const res = await backendFetch(searchUrl(deps.searxngUrl, query), {
        service: "search service",
        timeoutMs,
        maxBytes: 1024 * 1024,
        signal,
        accept: "application/json",
      });
      // SearXNG answers 403 when `json` is missing from search.formats in its settings.yml.
      if (res.status === 403)
        throw new ToolError("search service refused JSON (HTTP 403): enable json in its search.formats");
      if (res.status === 429) throw new ToolError("search service is rate-limiting (HTTP 429); try again later");
      if (res.status !== 200) throw new ToolError(`search service error: HTTP ${res.status}`);
      const picked = parseAnswer(res.text, res.truncated)
        .filter((h) => h.url && h.title)
        .slice(0, MAX_RESULTS)
        .map((h) => ({
          title: cutText(oneLine(h.title ?? ""), 150),
          url: h.url ?? "",
          snippet: snippet(h.content ?? "", MAX_SNIPPET_CHARS),
        }));
      if (picked.length === 0) throw new ToolError(`no web results for "${query}"; try other or fewer words`);
      return picked;
    },
  });
}

/** The search URL: the query percent-encoded into `q`, the JSON format asked for. */
export function searchUrl(base: string, query: string): string {
  const url = new URL(base.endsWith("/") ? base : `${base}/`);
  url.pathname = `${url.pathname}search`;
  url.searchParams.set("q", query);
  url.searchParams.set("format", "json");
  return url.toString();
}

function parseAnswer(text: string, truncated: boolean): z.infer<typeof searxngAnswer>["results"] {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    if (truncated) throw new ToolError("search service answer was too large");
    throw new ToolError("search service did not return JSON (is format=json enabled?)");
  }
  const parsed = searxngAnswer.safeParse(json);
  if (!parsed.success) throw new ToolError("search service returned JSON without a results list");
  return parsed.data.results;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

function snippet(text: string, max: number): string {
  const line = oneLine(text);
  return line.length <= max ? line : `${cutText(line, max - 1)}…`;
}
