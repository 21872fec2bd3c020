/** The `/tools` text: grouped by source, a server that is away said so (never its error text), and no listing said plainly. */
import { describe, expect, it } from "vitest";
import { toolListingText } from "../../../src/contracts/tool-listing.js";

describe("/tools text", () => {
  it("lists each source's tools, and a server that is away without leaking its error", () => {
    const text = toolListingText({
      updatedAt: 0,
      groups: [
        { source: "built-in", tools: [{ name: "get_time", description: "" }] },
        { source: "github", state: "retrying", error: "stderr: token ghp_secret rejected", tools: [] },
        { source: "files", state: "ready", tools: [] },
      ],
    });
    expect(text).toBe(
      "🔧 Tools I can use:\n• Built-in: get_time\n• github (MCP server): unavailable right now (retrying); its tools are back when it is.\n• files (MCP server): no tools",
    );
    expect(text).not.toContain("ghp_secret");
  });

  it("says so when no worker has published a listing", () => {
    expect(toolListingText(undefined)).toMatch(/can't see my tools right now/);
  });
});
