/**
 * Reads a `<tool_call>` block a small model wrote into its content (`{"name": …, "arguments": {…}}`); a block may
 * hold several calls (a JSON array, or objects one after another, as llama.cpp's parallel grammar allows).
 */

/** A call read from text, before it gets an id. */
export interface TextualToolCall {
  name: string;
  /** JSON text of the arguments, or the raw block when it was not JSON (the runner reports that to the model). */
  arguments: string;
}

/** Parses one block; a block that is not JSON still yields a call so the model hears what went wrong. */
export function parseToolCallBlock(block: string): TextualToolCall[] {
  const trimmed = block.trim();
  if (trimmed === "") return [];
  const values = parseJsonValues(trimmed);
  if (values) {
    const calls = values.flatMap((v) => (Array.isArray(v) ? v : [v])).map(toCall);
    if (calls.every((c): c is TextualToolCall => c !== undefined)) return calls;
  }
  // Not JSON: keep the name if we can see it, and hand the raw text on as the arguments.
  const name = /"name"\s*:\s*"([^"\\]{1,100})"/.exec(trimmed)?.[1] ?? "";
  return [{ name, arguments: trimmed }];
}

function toCall(value: unknown): TextualToolCall | undefined {
  if (!isRecord(value)) return undefined;
  const fn = isRecord(value.function) ? value.function : undefined;
  const name = typeof value.name === "string" ? value.name : typeof fn?.name === "string" ? fn.name : undefined;
  if (name === undefined) return undefined;
  const args = value.arguments ?? value.parameters ?? fn?.arguments ?? {};
  return { name, arguments: typeof args === "string" ? args : JSON.stringify(args) };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Parses `text` as one JSON value, or as several top-level values separated by whitespace or commas. */
function parseJsonValues(text: string): unknown[] | undefined {
  try {
    return [JSON.parse(text)];
  } catch {
    // fall through: maybe several objects in a row
  }
  const values: unknown[] = [];
  let i = 0;
  while (i < text.length) {
    while (i < text.length && /[\s,]/.test(text[i] ?? "")) i++;
    if (i >= text.length) break;
    const end = endOfJsonValue(text, i);
    if (end === -1) return undefined;
    try {
      values.push(JSON.parse(text.slice(i, end)));
    } catch {
      return undefined;
    }
    i = end;
  }
  return values.length > 0 ? values : undefined;
}

/** Index just past the object or array starting at `start`, honouring strings; -1 if it never closes. */
function endOfJsonValue(text: string, start: number): number {
  const open = text[start];
  if (open !== "{" && open !== "[") return -1;
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}
