/**
 * The tools a conversation may switch on and off, grouped by where they come from
 * ("built-in", and later one group per MCP server). The composition root injects a
 * catalogue function, so a new source of tools plugs in without the settings knowing it.
 */
import type { Tool } from "./tool.js";

/** One source's tools, as `/tools` lists them. */
export interface ToolCatalogueGroup {
  source: string;
  tools: { name: string; description: string }[];
}

/** Every tool an answer could be offered right now, by source. */
export type ToolCatalogue = () => ToolCatalogueGroup[];

/** The catalogue of the built-in tools. */
export function builtinToolCatalogue(tools: readonly Tool[]): ToolCatalogue {
  const group: ToolCatalogueGroup = { source: "built-in", tools: tools.map((t) => ({ name: t.name, description: t.description })) };
  return () => [group];
}
