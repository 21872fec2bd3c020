/**
 * Every tool the bot has, grouped by source (built-in, then each MCP server), as `/tools` lists them, and the
 * tool list of one model request: at most MAX_TOOLS_PER_REQUEST, as a 1.7B model picks badly from a long list.
 */
import type { ListedTool, ToolGroup } from "../contracts/tool-listing.js";
import type { McpLog } from "./mcp/mcp-server-connection.js";
import type { McpToolSource } from "./mcp/mcp-tool-source.js";
import { type AgentTool, type Tool, toOpenAiTool } from "./tool.js";

const BUILT_IN_SOURCE = "built-in";

/** One source's tools, as `/tools` lists them (MCP groups also say whether the server is up). */
export type ToolCatalogueGroup = ToolGroup;

/** Every tool an answer could be offered right now, by source. */
export type ToolCatalogue = () => ToolCatalogueGroup[];

/** The catalogue of the built-in tools. */
export function builtinToolCatalogue(tools: readonly Tool[]): ToolCatalogue {
  const group: ToolCatalogueGroup = { source: BUILT_IN_SOURCE, tools: tools.map(entry) };
  return () => [group];
}

/** Settings of the inventory. */
interface ToolInventoryOptions {
  builtIn: readonly Tool[];
  mcp?: McpToolSource;
  maxToolsPerRequest: number;
  /** Most characters the tool definitions (as sent, JSON) may take in one request; MCP tools past it are left out. */
  maxToolChars?: number;
  log: McpLog;
}

/** The share of the context tool definitions may take: half of it, at a cautious 3 characters a token. */
export function toolCharsForContext(contextTokens: number): number {
  return Math.floor(contextTokens / 2) * 3;
}

const definitionChars = new WeakMap<AgentTool, number>();
/** The length of a tool's definition as the request carries it (kept: a tool object never changes). */
function charsOf(tool: AgentTool): number {
  let chars = definitionChars.get(tool);
  if (chars === undefined) {
    chars = JSON.stringify(toOpenAiTool(tool)).length;
    definitionChars.set(tool, chars);
  }
  return chars;
}

/** The tools of one process (built-in and MCP). */
export interface ToolInventory {
  /** Every tool now, grouped by source: built-in first, then MCP servers in config order. */
  groups: ToolCatalogue;
  /**
   * The tools of one model request. `isEnabled` (per-chat settings) filters first; the cap then
   * keeps every built-in tool and the first MCP tools in config order, logging who was left out.
   */
  forRequest(isEnabled?: (name: string) => boolean): AgentTool[];
}

/** Creates the inventory over the built-in tools and an optional MCP source. */
export function createToolInventory(opts: ToolInventoryOptions): ToolInventory {
  // Each warning is logged when its list of names changes, not on every request.
  const warned = new Map<string, string>();
  const warnOnChange = (kind: string, names: string[], fields: object, message: string) => {
    const key = names.join(",");
    if (warned.get(kind) === key) return;
    warned.set(kind, key);
    if (names.length) opts.log.warn({ leftOut: names, ...fields }, message);
  };
  return {
    groups() {
      const builtIn: ToolGroup = { source: BUILT_IN_SOURCE, tools: opts.builtIn.map(entry) };
      const servers = (opts.mcp?.groups() ?? []).map((g) => ({
        source: g.server,
        state: g.status.state,
        ...(g.status.error ? { error: g.status.error } : {}),
        tools: g.tools.map(entry),
      }));
      return [builtIn, ...servers];
    },
    forRequest(isEnabled) {
      const keep = isEnabled ?? (() => true);
      const builtIn = opts.builtIn.filter((t) => keep(t.name));
      const mcp = (opts.mcp?.tools() ?? []).filter((t) => keep(t.name));
      const room = Math.max(0, opts.maxToolsPerRequest - builtIn.length);
      warnOnChange(
        "count",
        mcp.slice(room).map((t) => t.name),
        { maxToolsPerRequest: opts.maxToolsPerRequest },
        "more tools than MAX_TOOLS_PER_REQUEST: these MCP tools are not offered (choose with the server's tools.include)",
      );
      const offered = mcp.slice(0, room);
      if (opts.maxToolChars === undefined) return [...builtIn, ...offered];
      // Built-ins first, then MCP tools in config order while they fit: the context-refusal path can
      // drop history and the summary, never tools, so tools must fit before the request is built.
      let used = builtIn.reduce((sum, t) => sum + charsOf(t), 0);
      const fitting: AgentTool[] = [];
      const tooLarge: string[] = [];
      for (const tool of offered) {
        const chars = charsOf(tool);
        if (used + chars <= opts.maxToolChars) {
          used += chars;
          fitting.push(tool);
        } else tooLarge.push(tool.name);
      }
      warnOnChange(
        "size",
        tooLarge,
        { maxToolChars: opts.maxToolChars },
        "these MCP tools' definitions do not fit the model's context: they are not offered",
      );
      return [...builtIn, ...fitting];
    },
  };
}

function entry(tool: AgentTool): ListedTool {
  return { name: tool.name, description: tool.description };
}
