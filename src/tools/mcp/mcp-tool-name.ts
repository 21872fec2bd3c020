/**
 * Names MCP tools for the model: `<server>__<tool>`, reduced to the characters the OpenAI
 * protocol accepts (`[A-Za-z0-9_-]`, at most 64), unique among every tool of the request.
 */

import { createHash } from "node:crypto";

/** The longest function name the OpenAI tools protocol accepts. */
export const MAX_TOOL_NAME_LENGTH = 64;

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

/**
 * Makes `wanted` unique against `taken` (which it then joins): a clash gets `_2`, `_3`, …, the
 * base cut short enough that the suffixed name still fits in 64 characters.
 */
export function uniqueToolName(wanted: string, taken: Set<string>): string {
  let name = wanted;
  for (let n = 2; taken.has(name); n++) {
    const suffix = `_${n}`;
    name = wanted.slice(0, MAX_TOOL_NAME_LENGTH - suffix.length) + suffix;
  }
  taken.add(name);
  return name;
}
