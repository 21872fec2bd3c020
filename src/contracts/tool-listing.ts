/** The tools by source, as the workers (which hold the MCP connections) publish them for `/tools`. */

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
