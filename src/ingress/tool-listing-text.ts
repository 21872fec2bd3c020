/** The `/tools` answer: the bot's tools grouped by source, in plain lines every platform can show. */
import type { ToolListing } from "../contracts/tool-listing.js";

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
