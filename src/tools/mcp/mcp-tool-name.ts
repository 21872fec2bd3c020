/**
 * Names MCP tools for the model: `<server>__<tool>`, reduced to the characters the OpenAI
 * protocol accepts (`[A-Za-z0-9_-]`, at most 64), unique among every tool of the request.
 */

/** The longest function name the OpenAI tools protocol accepts. */
export const MAX_TOOL_NAME_LENGTH = 64;

/** `<server>__<tool>` with every other character turned into `_`, cut to 64 characters. */
export function mcpToolName(server: string, tool: string): string {
  const clean = (part: string) => part.replace(/[^A-Za-z0-9_-]/g, "_");
  return `${clean(server)}__${clean(tool)}`.slice(0, MAX_TOOL_NAME_LENGTH);
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
