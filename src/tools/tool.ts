/**
 * A tool: name, description for the model, a zod schema for its arguments (the JSON Schema sent to the
 * model is derived from it) and `execute`, which may throw: the runner turns failures into text for the model.
 */
import { z } from "zod";
import type { ToolConversation } from "../contracts/tool-conversation.js";

/** What a running tool gets besides its arguments. */
export interface ToolContext {
  /** Fires on /stop, shutdown, or the tool's own timeout. */
  signal: AbortSignal;
  /** The chat the call comes from (absent where there is none, e.g. `npm run ask`). */
  conversation?: ToolConversation;
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

/** What a JSON Schema tool's argument check says: fine, or the field and why not. */
export type ArgumentCheck = { ok: true } | { ok: false; problem: string };

/** A tool that brings its own JSON Schema (an MCP server's tool) instead of a zod schema. */
export interface JsonSchemaTool {
  name: string;
  description: string;
  /** JSON Schema of the arguments object, sent to the model unchanged. */
  parameters: Record<string, unknown>;
  /** Checks arguments against `parameters`; a failure names the field so the model can correct it. */
  validate(args: Record<string, unknown>): ArgumentCheck;
  timeoutMs?: number;
  execute(args: Record<string, unknown>, ctx: ToolContext): Promise<unknown>;
}

/** Anything the agent loop can offer the model: a built-in zod tool or a JSON Schema tool. */
export type AgentTool = Tool | JsonSchemaTool;

/** True for a tool that brings its own JSON Schema. */
export function isJsonSchemaTool(tool: AgentTool): tool is JsonSchemaTool {
  return "parameters" in tool;
}

/** Declares a tool with its argument type inferred from the schema. */
export function defineTool<S extends z.ZodType>(tool: Tool<S>): Tool<S> {
  return tool;
}

/** A tool as the OpenAI `tools` list carries it. */
type OpenAiToolSpec = {
  type: "function";
  function: { name: string; description: string; parameters: Record<string, unknown> };
};

// Converting a zod schema is costly and a tool never changes: each is converted once.
const specs = new WeakMap<AgentTool, OpenAiToolSpec>();

/** The OpenAI `tools` entry for a tool, its parameters derived from the zod schema (or given as JSON Schema). */
export function toOpenAiTool(tool: AgentTool): OpenAiToolSpec {
  const known = specs.get(tool);
  if (known) return known;
  let spec: OpenAiToolSpec;
  if (isJsonSchemaTool(tool)) {
    spec = {
      type: "function",
      function: { name: tool.name, description: tool.description, parameters: tool.parameters },
    };
  } else {
    const { $schema: _drop, ...parameters } = z.toJSONSchema(tool.schema, { io: "input" }) as Record<string, unknown>;
    spec = { type: "function", function: { name: tool.name, description: tool.description, parameters } };
  }
  specs.set(tool, spec);
  return spec;
}
