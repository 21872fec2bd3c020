/**
 * The tools the bot has, grouped by source, as the workers publish them for `/tools`. The
 * worker holds the MCP connections; the bots role, in another process, only reads this.
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
