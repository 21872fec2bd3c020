/**
 * An MCP server's tool in the agent loop: its JSON Schema goes to the model as is, arguments are checked
 * against it first (so a small model hears which field is wrong), and every failure is thrown as a ToolError.
 */
import type { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { ToolError } from "../tool-error.js";
import type { ArgumentCheck, JsonSchemaTool } from "../tool.js";
import { formatToolResult } from "./mcp-result.js";
import { McpUnavailableError, type McpServerConnection, type McpToolInfo } from "./mcp-server-connection.js";

/** A description longer than this is cut: one verbose server must not crowd a small model's context. */
const MAX_DESCRIPTION_CHARS = 1000;

/** What one adapted tool needs. */
interface McpToolOptions {
  connection: McpServerConnection;
  info: McpToolInfo;
  /** The name the model sees (`<server>__<tool>`, made unique). */
  modelName: string;
  timeoutMs: number;
  validator: AjvJsonSchemaValidator;
}

/** Wraps one listed MCP tool for the agent loop. */
export function createMcpTool(opts: McpToolOptions): JsonSchemaTool {
  const { connection, info, timeoutMs } = opts;
  const { $schema: _drop, ...parameters } = info.inputSchema as Record<string, unknown>;
  let check: ((args: Record<string, unknown>) => ArgumentCheck) | undefined;
  const description = (info.description ?? "").trim();
  return {
    name: opts.modelName,
    description:
      description.length > MAX_DESCRIPTION_CHARS ? `${description.slice(0, MAX_DESCRIPTION_CHARS - 1)}…` : description,
    parameters,
    timeoutMs,
    validate(args) {
      // Compiled on first use: most listed tools are never called.
      check ??= compileCheck(opts.validator, parameters);
      return check(args);
    },
    async execute(args, { signal }) {
      let result;
      try {
        result = await connection.call(info.name, args, { signal, timeoutMs });
      } catch (error) {
        throw new ToolError(explainCallError(error, connection.name, timeoutMs));
      }
      const text = formatToolResult(result);
      if (result.isError) throw new ToolError(text);
      return text;
    },
  };
}

function compileCheck(
  validator: AjvJsonSchemaValidator,
  schema: Record<string, unknown>,
): (args: Record<string, unknown>) => ArgumentCheck {
  let validate: ReturnType<AjvJsonSchemaValidator["getValidator"]>;
  try {
    validate = validator.getValidator(schema as Parameters<AjvJsonSchemaValidator["getValidator"]>[0]);
  } catch {
    // A schema our validator cannot compile: the server validates its own arguments.
    return () => ({ ok: true });
  }
  return (args) => {
    const verdict = validate(args);
    return verdict.valid ? { ok: true } : { ok: false, problem: readableAjvErrors(verdict.errorMessage) };
  };
}

/** `data must have required property 'a', data/b must be number` → `"a" is required; "b" must be number`. */
function readableAjvErrors(text: string): string {
  return text
    .split(", data")
    .map((part, i) => (i === 0 ? part : `data${part}`))
    .slice(0, 5)
    .map((part) => {
      const required = /^data(?:\/(\S*))? must have required property '([^']+)'/.exec(part);
      if (required) return `"${required[1] ? `${required[1].replace(/\//g, ".")}.` : ""}${required[2]}" is required`;
      const field = /^data\/(\S+) (.*)$/.exec(part);
      if (field) return `"${field[1]!.replace(/\//g, ".")}" ${field[2]}`;
      return part.replace(/^data /, "the arguments ");
    })
    .join("; ");
}

/** The observation for a call that did not return a result. */
function explainCallError(error: unknown, server: string, timeoutMs: number): string {
  if (error instanceof McpUnavailableError) return `${error.message}. Answer without it or try again later.`;
  if (error instanceof McpError) {
    switch (error.code) {
      case ErrorCode.RequestTimeout:
        return `timed out after ${timeoutMs} ms. The service may be slow; try again later or answer without it.`;
      case ErrorCode.ConnectionClosed:
        return `the MCP server "${server}" stopped during the call; it is being restarted. Try again later or answer without it.`;
      case ErrorCode.InvalidParams:
        return `the server rejected the arguments: ${stripMcpPrefix(error.message)}`;
      default:
        return stripMcpPrefix(error.message);
    }
  }
  return error instanceof Error ? error.message : String(error);
}

function stripMcpPrefix(message: string): string {
  return message.replace(/^MCP error -?\d+: /, "");
}
