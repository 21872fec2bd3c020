/**
 * A tool is declared once: name, description for the model, a zod schema for
 * its arguments (the JSON Schema sent to the model is derived from it) and
 * `execute`. Tools may throw; the runner turns every failure into text for the model.
 */
import { z } from "zod";

/** What a running tool gets besides its arguments. */
export interface ToolContext {
  /** Fires on /stop, shutdown, or the tool's own timeout. */
  signal: AbortSignal;
}

export interface Tool<S extends z.ZodType = z.ZodType> {
  name: string;
  description: string;
  schema: S;
  /** Per-tool timeout; the runner's default applies when absent. */
  timeoutMs?: number;
  /** Returns JSON-serialisable data (or a string), sent back to the model as JSON text. */
  execute(args: z.infer<S>, ctx: ToolContext): Promise<unknown>;
}

/** Declares a tool with its argument type inferred from the schema. */
export function defineTool<S extends z.ZodType>(tool: Tool<S>): Tool<S> {
  return tool;
}

/** The OpenAI `tools` entry for a tool, its parameters derived from the zod schema. */
export function toOpenAiTool(tool: Tool): {
  type: "function";
  function: { name: string; description: string; parameters: Record<string, unknown> };
} {
  const { $schema: _drop, ...parameters } = z.toJSONSchema(tool.schema, { io: "input" }) as Record<string, unknown>;
  return { type: "function", function: { name: tool.name, description: tool.description, parameters } };
}
