/**
 * Runs one tool call and always comes back with text for the model: an unknown tool, bad JSON, arguments that fail
 * the schema (naming the field and why), a timeout, an error or a cancellation all become an observation the model
 * can correct itself from. Nothing here throws into the loop.
 */
import type { ToolConversation } from "../contracts/tool-conversation.js";
import type { z } from "zod";
import type { ToolCallRecord } from "../contracts/chat-message.js";
import { isJsonSchemaTool, toOpenAiTool, type AgentTool, type ToolContext } from "../tools/tool.js";
import { cutTextWithMarker } from "../shared/text-cut.js";

/** The result of one call, paired with the call by `id`. */
export interface ToolOutcome {
  id: string;
  name: string;
  /** false: `output` is an error message for the model. */
  ok: boolean;
  output: string;
  durationMs: number;
}

/** Runner settings. */
export interface ToolRunnerOptions {
  tools: readonly AgentTool[];
  /** Applies to tools without their own `timeoutMs` (TOOL_TIMEOUT_MS). */
  defaultTimeoutMs: number;
  /** Longest observation sent back; a 1.7B model with a 4k context drowns in more. */
  maxOutputChars?: number;
  /** The chat of this answer, handed to every tool in its context. */
  conversation?: ToolConversation;
}

/** Runs calls; `signal` is the job's (/stop, shutdown). */
export interface ToolRunner {
  run(call: ToolCallRecord, signal?: AbortSignal): Promise<ToolOutcome>;
}

const DEFAULT_MAX_OUTPUT_CHARS = 12_000;

class ToolTimeout extends Error {
  constructor(readonly ms: number) {
    super(`timed out after ${ms} ms`);
  }
}

/** Creates a runner over a fixed set of tools. */
export function createToolRunner(opts: ToolRunnerOptions): ToolRunner {
  const byName = new Map(opts.tools.map((t) => [t.name, t]));
  const maxChars = opts.maxOutputChars || DEFAULT_MAX_OUTPUT_CHARS;

  async function execute(
    tool: AgentTool,
    rawArgs: string,
    signal: AbortSignal | undefined,
  ): Promise<{ ok: boolean; output: string }> {
    const name = tool.name;
    let json: unknown = {}; // servers send "" for a call without arguments
    const text = rawArgs.trim();
    if (text !== "") {
      try {
        json = JSON.parse(text);
      } catch (error) {
        return fail(
          `the arguments for ${name} are not valid JSON (${(error as Error).message}). ` +
            `Call ${name} again with a JSON object. ${describeParameters(tool)}`,
        );
      }
    }
    if (typeof json !== "object" || json === null || Array.isArray(json)) {
      return fail(
        `the arguments for ${name} must be a JSON object, got ${Array.isArray(json) ? "an array" : typeof json === "object" ? "null" : `a ${typeof json}`}. ${describeParameters(tool)}`,
      );
    }
    const parsed = checkArguments(tool, json as Record<string, unknown>);
    if (!parsed.ok) {
      return fail(`invalid arguments for ${name}: ${parsed.problem}. ${describeParameters(tool)}`);
    }

    const timeoutMs = tool.timeoutMs ?? opts.defaultTimeoutMs;
    const controller = new AbortController();
    const onAbort = (): void => controller.abort(signal?.reason);
    if (signal?.aborted) return fail(`${name} was cancelled.`);
    signal?.addEventListener("abort", onAbort, { once: true });
    let timer: ReturnType<typeof setTimeout> | undefined;
    // A tool that ignores its signal must still be cut off: race it against the abort.
    const stopped = new Promise<never>((_, reject) => {
      controller.signal.addEventListener("abort", () => reject(controller.signal.reason), { once: true });
      timer = setTimeout(() => controller.abort(new ToolTimeout(timeoutMs)), timeoutMs);
    });
    stopped.catch(() => undefined);
    try {
      const result = await Promise.race([
        Promise.resolve().then(() =>
          parsed.run({
            signal: controller.signal,
            ...(opts.conversation ? { conversation: opts.conversation } : {}),
          }),
        ),
        stopped,
      ]);
      return { ok: true, output: serialise(result) };
    } catch (error) {
      if (controller.signal.reason instanceof ToolTimeout) {
        return fail(
          `${name} timed out after ${timeoutMs} ms. The service may be slow; try again later or answer without it.`,
        );
      }
      if (signal?.aborted) return fail(`${name} was cancelled.`);
      return fail(`${name} failed: ${errorMessage(error)}`);
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    }
  }

  return {
    async run(call, signal) {
      const started = performance.now();
      const name = call.function.name;
      const tool = byName.get(name);
      let result: { ok: boolean; output: string };
      if (!tool) {
        const known = [...byName.keys()];
        result = fail(
          `unknown tool "${name}". ${known.length ? `Available tools: ${known.join(", ")}.` : "No tools are available; answer directly."}`,
        );
      } else {
        try {
          result = await execute(tool, call.function.arguments, signal);
        } catch (error) {
          // execute() is written not to throw; this is the last guard (e.g. a getter that throws during serialisation).
          result = fail(`${name} failed: ${errorMessage(error)}`);
        }
      }
      return {
        id: call.id,
        name,
        ok: result.ok,
        output: cutTextWithMarker(result.output, maxChars, "…(truncated)"),
        durationMs: Math.max(0, Math.round(performance.now() - started)),
      };
    },
  };
}

/** Validates with the tool's zod schema, or its own JSON Schema check; on success, the call bound to the checked arguments. */
function checkArguments(
  tool: AgentTool,
  json: Record<string, unknown>,
): { ok: true; run(ctx: ToolContext): Promise<unknown> } | { ok: false; problem: string } {
  if (isJsonSchemaTool(tool)) {
    const verdict = tool.validate(json);
    return verdict.ok ? { ok: true, run: (ctx) => tool.execute(json, ctx) } : verdict;
  }
  const parsed = tool.schema.safeParse(json);
  return parsed.success
    ? { ok: true, run: (ctx) => tool.execute(parsed.data, ctx) }
    : { ok: false, problem: describeIssues(parsed.error.issues, json) };
}

function fail(message: string): { ok: false; output: string } {
  return { ok: false, output: `Error: ${message}` };
}

function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  return typeof error === "string" ? error : (JSON.stringify(error) ?? String(error));
}

function serialise(result: unknown): string {
  if (typeof result === "string") return result;
  if (result === undefined) return "null";
  try {
    return JSON.stringify(result) ?? "null";
  } catch (error) {
    return `Error: the tool returned data that cannot be sent as JSON (${errorMessage(error)}).`;
  }
}

/** "city: required (expected string)" — the field and why, which a small model can act on. */
function describeIssues(issues: readonly z.core.$ZodIssue[], input: unknown): string {
  return issues
    .slice(0, 5)
    .map((issue) => {
      const field = issue.path.length ? issue.path.map(String).join(".") : "(arguments)";
      const missing = issue.code === "invalid_type" && valueAt(input, issue.path) === undefined;
      return missing ? `"${field}" is required (expected ${issue.expected})` : `"${field}": ${issue.message}`;
    })
    .join("; ");
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let current = input;
  for (const key of path) {
    if (typeof current !== "object" || current === null) return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}

/** "Parameters: city (string, required)." from the same JSON Schema the model was sent. */
function describeParameters(tool: AgentTool): string {
  const schema = toOpenAiTool(tool).function.parameters as {
    properties?: Record<string, { type?: unknown }>;
    required?: string[];
  };
  const props = Object.entries(schema.properties ?? {});
  if (props.length === 0) return `${tool.name} takes no arguments: send {}.`;
  const required = new Set(schema.required ?? []);
  return (
    "Parameters: " +
    props
      .map(
        ([key, s]) =>
          `${key} (${typeof s.type === "string" ? s.type : "value"}, ${required.has(key) ? "required" : "optional"})`,
      )
      .join(", ") +
    "."
  );
}
