/**
 * Reading Bot API parameters the way the real server does: JSON bodies carry typed values,
 * forms and multipart carry strings, and JSON-valued parameters may come either way.
 */
import { bad } from "./method-outcomes.js";
import type { ChatState, TelegramState } from "./state.js";

/** An integer parameter (a number or a numeric string), or undefined. */
export function int(value: unknown): number | undefined {
  if (typeof value === "number" && Number.isInteger(value)) return value;
  if (typeof value === "string" && /^-?\d+$/.test(value.trim())) return Number(value.trim());
  return undefined;
}

/** A string parameter (numbers and booleans as their text), or undefined. */
export function str(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return undefined;
}

/** A boolean parameter as forms and JSON spell true. */
export function bool(value: unknown): boolean {
  return value === true || value === "true" || value === "1" || value === 1;
}

/** A JSON-valued parameter, parsed when it came as text; a 400 naming it when that text is not JSON. */
export function jsonArg(value: unknown, what: string): unknown {
  if (typeof value !== "string") return value;
  try {
    return JSON.parse(value);
  } catch {
    throw bad(`can't parse ${what} JSON object`);
  }
}

/** Whether two values serialise alike (absent counts as null). */
export function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}

/** The chat a `chat_id` parameter names, or the 400 the real server answers. */
export function chatFromParam(state: TelegramState, value: unknown): ChatState {
  const id = int(value);
  if (id === undefined) {
    if (value === undefined || value === "") throw bad("chat_id is empty");
    throw bad("chat not found");
  }
  const found = state.chats.get(id);
  if (!found) throw bad("chat not found");
  return found;
}
