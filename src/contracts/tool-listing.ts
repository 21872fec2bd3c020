/**
 * The tools the bot has, grouped by source, as the workers publish them, and the `/tools` text
 * every adapter answers with. The worker holds the MCP connections; the adapters, in another
 * process, only read this.
 */

/** One tool as listed. */
export interface ListedTool {
  name: string;
  description: string;
}

/** The tools of one source: `built-in`, or an MCP server by its name (with its state). */
export interface ToolGroup {
  source: string;
  /** MCP servers only: `ready`, or why its tools are absent right now (`retrying`, `connecting`). */
  state?: string;
  error?: string;
  tools: ListedTool[];
}

/** A worker's published catalogue. */
export interface ToolListing {
  /** Epoch milliseconds of publication. */
  updatedAt: number;
  groups: ToolGroup[];
}

/** How a platform shows a tool name (Discord wraps it in backticks so `__` is not read as underline). */
export interface ToolListingStyle {
  name(text: string): string;
}

const PLAIN: ToolListingStyle = { name: (text) => text };

/** The listing as text; a deployment whose workers have not published one says so. */
export function toolListingText(listing: ToolListing | undefined, style: ToolListingStyle = PLAIN): string {
  if (!listing) return "I can't see my tools right now (no worker has reported them yet). Please try again in a minute.";
  const lines = ["🔧 Tools I can use:"];
  for (const group of listing.groups) {
    const label = group.source === "built-in" ? "Built-in" : `${group.source} (MCP server)`;
    if (group.state !== undefined && group.state !== "ready") {
      lines.push(`• ${label}: unavailable right now (${group.state}); its tools are back when it is.`);
      continue;
    }
    const names = group.tools.map((t) => style.name(t.name)).join(", ");
    lines.push(`• ${label}: ${names || "no tools"}`);
  }
  return lines.join("\n");
}
