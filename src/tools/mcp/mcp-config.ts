/**
 * The MCP servers file (MCP_CONFIG) in desktop clients' shape, `{"mcpServers": {"<name>": {"command", "args",
 * "env", "cwd"} | {"url", "headers"}}}`, plus our own `tools.include`/`exclude`, `timeoutMs` and `enabled`.
 * Validated once at start; a bad file is an McpConfigError naming the server and the field.
 */
import { readFileSync } from "node:fs";
import { z } from "zod";

/** How to reach one server. */
export type McpTransportConfig =
  | {
      kind: "stdio";
      command: string;
      args: string[];
      env: Record<string, string>;
      /** Absent: the child starts in an empty directory of its own, never the bot's (which holds `.env`). */
      cwd?: string;
      /** The account the child runs as (a name, a uid or `uid:gid`); absent: the bot's own. */
      user?: string;
    }
  /** `sseOnly`: the entry said `"type": "sse"`, so the Streamable HTTP attempt is skipped. */
  | { kind: "http"; url: string; headers: Record<string, string>; sseOnly: boolean };

/** One server entry, validated. */
export interface McpServerConfig {
  name: string;
  enabled: boolean;
  /** Per-call timeout handed to the SDK; the bot's TOOL_TIMEOUT_MS when absent. */
  timeoutMs?: number;
  /** Only these tools (in this order) are offered; absent = all of them. */
  include?: string[];
  exclude: string[];
  transport: McpTransportConfig;
}

/** The whole file, servers in the order the file lists them (that order decides who is cut first). */
export interface McpConfig {
  servers: McpServerConfig[];
}

/** A file that cannot be used: the message says which file, server and field, and what is expected. */
export class McpConfigError extends Error {
  override readonly name = "McpConfigError";
}

const stringMap = (what: string) =>
  z.record(z.string(), z.string({ message: `expected a string value for each ${what}` }), {
    message: `expected an object of ${what} names to strings`,
  });

const toolNames = z
  .array(z.string().min(1, { message: "expected tool names" }), { message: "expected an array of tool names" })
  .optional();

const common = {
  tools: z
    .object({ include: toolNames, exclude: toolNames }, { message: 'expected {"include": [...], "exclude": [...]}' })
    .strict()
    .optional(),
  timeoutMs: z
    .number({ message: "expected a number of milliseconds" })
    .int({ message: "expected a whole number of milliseconds" })
    .min(100, { message: "expected at least 100 ms" })
    .max(3_600_000, { message: "expected at most 3600000 ms (one hour)" })
    .optional(),
  enabled: z.boolean({ message: "expected true or false" }).optional(),
  /** Cline/Roo spelling of `enabled: false`. */
  disabled: z.boolean({ message: "expected true or false" }).optional(),
  /** Desktop clients' approval lists: accepted so a pasted file works, and ignored (the bot has no approval step). */
  autoApprove: z.array(z.string()).optional(),
  alwaysAllow: z.array(z.string()).optional(),
};

const stdioEntry = z
  .object({
    type: z.literal("stdio", { message: 'expected "stdio" for a server with "command"' }).optional(),
    command: z
      .string({ message: "expected the program to start" })
      .min(1, { message: "expected the program to start" }),
    args: z.array(z.string({ message: "expected strings" }), { message: "expected an array of strings" }).default([]),
    env: stringMap("variable").default({}),
    cwd: z.string({ message: "expected a directory" }).min(1, { message: "expected a directory" }).optional(),
    user: z
      .string({ message: "expected a user name, a uid or uid:gid" })
      .regex(/^(?:[a-z_][a-z0-9_.-]*\$?|\d+(?::\d+)?)$/i, { message: "expected a user name, a uid or uid:gid" })
      .optional(),
    ...common,
  })
  .strict();

const remoteEntry = z
  .object({
    type: z
      .enum(["http", "streamable-http", "streamableHttp", "sse"], {
        message: 'expected "http", "streamable-http" or "sse"',
      })
      .optional(),
    url: z
      .url({ message: "expected an http(s) URL" })
      .refine((v) => /^https?:$/.test(new URL(v).protocol), { message: "expected an http or https URL" }),
    headers: stringMap("header").default({}),
    ...common,
  })
  .strict();

const fileSchema = z.object(
  { mcpServers: z.record(z.string(), z.unknown(), { message: "expected an object of servers" }) },
  { message: 'expected {"mcpServers": {...}}' },
);

/** Reads and validates the file at `path`; throws McpConfigError naming what is wrong. */
export function loadMcpConfigFile(path: string): McpConfig {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new McpConfigError(
      `MCP_CONFIG: cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new McpConfigError(`MCP_CONFIG: ${path} is not valid JSON: ${jsonErrorText(text, error as Error)}`);
  }
  return parseMcpConfig(json, path);
}

/** JSON.parse's message with its character position turned into a line and column an editor shows. */
function jsonErrorText(text: string, error: Error): string {
  const match = / in JSON at position (\d+)/.exec(error.message);
  const position = match ? Number(match[1]) : /end of JSON input/.test(error.message) ? text.length : undefined;
  const reason = error.message.replace(/ in JSON at position \d+.*$/s, "");
  if (position === undefined) return reason;
  const before = text.slice(0, position).split("\n");
  return `line ${before.length}, column ${[...before.at(-1)!].length + 1}: ${reason}`;
}

/** Validates an already parsed file; `source` names it in errors. */
export function parseMcpConfig(json: unknown, source = "MCP_CONFIG"): McpConfig {
  const file = fileSchema.safeParse(json);
  if (!file.success) {
    const issue = file.error.issues[0];
    const field = issue?.path.length ? ` field "${issue.path.join(".")}"` : "";
    throw new McpConfigError(`MCP_CONFIG: ${source}:${field} ${issue?.message ?? "invalid"}`);
  }
  const problems: string[] = [];
  const servers: McpServerConfig[] = [];
  for (const [name, entry] of Object.entries(file.data.mcpServers)) {
    if (!/[A-Za-z0-9]/.test(name)) {
      problems.push(
        `server "${name}": the name needs at least one letter or digit (it becomes the prefix of its tool names)`,
      );
      continue;
    }
    const parsed = parseServer(name, entry);
    if (typeof parsed === "string") problems.push(parsed);
    else servers.push(parsed);
  }
  if (problems.length) throw new McpConfigError(`MCP_CONFIG: ${source}:\n${problems.map((p) => `  ${p}`).join("\n")}`);
  return { servers };
}

/** One entry → its config, or a line naming the server and the field. */
function parseServer(name: string, entry: unknown): McpServerConfig | string {
  if (typeof entry !== "object" || entry === null || Array.isArray(entry))
    return `server "${name}": expected an object`;
  const hasCommand = "command" in entry;
  const hasUrl = "url" in entry;
  if (hasCommand === hasUrl) {
    return `server "${name}": expected either "command" (a stdio server) or "url" (a remote server)${hasCommand ? ", not both" : ""}`;
  }
  const parsed = hasCommand ? stdioEntry.safeParse(entry) : remoteEntry.safeParse(entry);
  if (!parsed.success) {
    return parsed.error.issues
      .slice(0, 3)
      .map((issue) => {
        if (issue.code === "unrecognized_keys")
          return `server "${name}": unknown field ${issue.keys.map((k) => `"${k}"`).join(", ")}`;
        return `server "${name}", field "${issue.path.map(String).join(".") || "(entry)"}": ${issue.message}`;
      })
      .join("\n  ");
  }
  const data = parsed.data;
  const transport: McpTransportConfig =
    "command" in data
      ? {
          kind: "stdio",
          command: data.command,
          args: data.args,
          env: data.env,
          ...(data.cwd ? { cwd: data.cwd } : {}),
          ...(data.user ? { user: data.user } : {}),
        }
      : { kind: "http", url: data.url, headers: data.headers, sseOnly: data.type === "sse" };
  return {
    name,
    enabled: data.enabled ?? !(data.disabled ?? false),
    ...(data.timeoutMs !== undefined ? { timeoutMs: data.timeoutMs } : {}),
    ...(data.tools?.include ? { include: data.tools.include } : {}),
    exclude: data.tools?.exclude ?? [],
    transport,
  };
}

const SECRET_NAME = /token|key|secret|password|passwd|auth|credential|cookie/i;

/** Values in the file that name themselves secrets (a `GITHUB_TOKEN` env value, an `Authorization` header): kept out of logs and chats. */
export function mcpConfigSecrets(config: McpConfig): string[] {
  const entries = config.servers.flatMap((s) =>
    Object.entries(s.transport.kind === "stdio" ? s.transport.env : s.transport.headers),
  );
  // Short values are settings, not secrets, and scrubbing them would mangle ordinary text.
  return entries.filter(([name, value]) => SECRET_NAME.test(name) && value.length >= 8).map(([, value]) => value);
}
