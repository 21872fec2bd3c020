/** Names MCP tools for the model: `<server>__<tool>`, in the OpenAI protocol's `[A-Za-z0-9_-]{1,64}`, unique. */
import { createHash } from "node:crypto";

/** The longest function name the OpenAI tools protocol accepts. */
const MAX_TOOL_NAME_LENGTH = 64;

/**
 * `<server>__<tool>`, each run of other characters turned into one `_`, cut to 64 characters. A part
 * with no letter or digit left (`查询天气`) becomes `x` + a short hash of it, so it stays distinct.
 */
export function mcpToolName(server: string, tool: string): string {
  return `${cleanPart(server)}__${cleanPart(tool)}`.slice(0, MAX_TOOL_NAME_LENGTH);
}

function cleanPart(part: string): string {
  const clean = part.replace(/[^A-Za-z0-9_-]+/g, "_");
  return /[A-Za-z0-9]/.test(clean) ? clean : `x${createHash("sha256").update(part).digest("hex").slice(0, 6)}`;
}

/** The names already given in one build, and for each wanted name the next suffix to try. */
export interface ToolNamer {
  taken: Set<string>;
  nextSuffix: Map<string, number>;
}

/** A namer that never gives out `reserved` (the built-in tools' names). */
export function createToolNamer(reserved: Iterable<string>): ToolNamer {
  return { taken: new Set(reserved), nextSuffix: new Map() };
}

/**
 * Makes `wanted` unique in `namer` (which it then joins): a clash gets `_2`, `_3`, …, the base cut to fit 64
 * characters. Each wanted name remembers its last suffix: 10,000 tools of one name cost 10,000 steps, not 50 million.
 */
export function uniqueToolName(wanted: string, namer: ToolNamer): string {
  let name = wanted;
  let n = namer.nextSuffix.get(wanted) ?? 2;
  while (namer.taken.has(name)) {
    const suffix = `_${n++}`;
    name = wanted.slice(0, MAX_TOOL_NAME_LENGTH - suffix.length) + suffix;
  }
  namer.nextSuffix.set(wanted, n);
  namer.taken.add(name);
  return name;
}
