/**
 * llama.cpp's side endpoints for the fake model server, as a real `llama-server` answers them:
 * `POST /tokenize` (`{"content"}` → `{"tokens": [ids]}`, Qwen3's real tokenizer), `GET /props`
 * (the captured body of fixture 33 with this fake's `n_ctx`), and the context check of a chat
 * request (the prompt rendered with Qwen3's chat template and counted; over `n_ctx` it is
 * refused with HTTP 400 `exceed_context_size_error`, fixture 26/27).
 *
 * The prompt is rendered here on its own (not with the bot's code; only the tokenizer package's
 * thread wrapper is shared), and that rendering is held
 * to the real server's `prompt_tokens` in the fixtures (test/agent/llama-extras.test.ts).
 */
import { readFileSync } from "node:fs";
import { createQwen3Tokenizer } from "../../src/tokens/qwen3-tokenizer.js";

/** Options of the llama.cpp extras. */
export interface LlamaExtrasOptions {
  /** `n_ctx` reported by `/props` (default 16384, the compose file's `-c`). */
  contextTokens?: number;
  /** Refuse chat requests whose prompt exceeds `contextTokens`, as llama.cpp does (default false). */
  enforceContext?: boolean;
  /** Serve `/tokenize` (default true; false: 404 like a server without it). */
  tokenize?: boolean;
  /**
   * Keep llama-server's slots and prompt cache (llama-slots.ts): each chat request's prompt is rendered
   * and tokenised, and its final chunk reports the `timings.cache_n`/`prompt_n` and
   * `usage.prompt_tokens_details.cached_tokens` a real server would. `true`: 4 slots.
   */
  promptCache?: boolean | { slots?: number };
  /** Answer every `/tokenize` with this many tokens whatever the text (a lying or broken server). */
  tokenizeLie?: number;
  /** Serve `/props` (default true). */
  props?: boolean;
  /** Extra or replaced top-level `/props` fields. */
  propsFields?: Record<string, unknown>;
}

// Qwen3's tokenizer (the package, in a worker thread like a separate server process: loading it never stalls this fake).
const qwen3 = createQwen3Tokenizer();

/** Loads Qwen3's tokenizer now (once per test process). */
export async function qwen3Encoder(): Promise<void> {
  if (!(await qwen3.warm())) throw new Error("fake llama.cpp: the Qwen3 tokenizer package could not be loaded");
}

const PROPS_FIXTURE = JSON.parse(
  readFileSync(new URL("../agent/fixtures/llama-server/random_33_get_props.json", import.meta.url), "utf8"),
) as Record<string, any>;

/** The `/props` body for a context size. */
export function propsBody(contextTokens: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    ...PROPS_FIXTURE,
    default_generation_settings: { ...PROPS_FIXTURE.default_generation_settings, n_ctx: contextTokens },
    ...extra,
  };
}

/** Python-style JSON (Jinja's tojson): `", "` and `": "` separators. */
function pyJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(pyJson).join(", ")}]`;
  if (value && typeof value === "object")
    return `{${Object.entries(value)
      .map(([k, v]) => `${JSON.stringify(k)}: ${pyJson(v)}`)
      .join(", ")}}`;
  return JSON.stringify(value) ?? "null";
}

/** Qwen3's chat template, for the shapes the bot sends (system first, user/assistant/tool, tools, thinking switch). */
export function renderQwen3Prompt(body: {
  messages?: Array<Record<string, any>>;
  tools?: unknown[];
  chat_template_kwargs?: { enable_thinking?: boolean };
}): string {
  const messages = body.messages ?? [];
  const tools = body.tools ?? [];
  let out = "";
  const first = messages[0];
  const system = first?.role === "system" ? String(first.content ?? "") : undefined;
  if (tools.length) {
    out += `<|im_start|>system\n${system !== undefined ? `${system}\n\n` : ""}`;
    out +=
      "# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>";
    for (const tool of tools) out += `\n${pyJson(tool)}`;
    out +=
      '\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n';
  } else if (system !== undefined) out += `<|im_start|>system\n${system}<|im_end|>\n`;
  messages.forEach((m, i) => {
    const content = typeof m.content === "string" ? m.content : "";
    if (m.role === "user" || (m.role === "system" && i > 0)) out += `<|im_start|>${m.role}\n${content}<|im_end|>\n`;
    else if (m.role === "assistant") {
      out += `<|im_start|>assistant\n${content.includes("</think>") ? content.split("</think>").at(-1)!.replace(/^\n+/, "") : content}`;
      (m.tool_calls ?? []).forEach((c: any, j: number) => {
        if (j > 0 || content) out += "\n";
        const args = typeof c.function?.arguments === "string" ? c.function.arguments : pyJson(c.function?.arguments);
        out += `<tool_call>\n{"name": "${c.function?.name}", "arguments": ${args}}\n</tool_call>`;
      });
      out += "<|im_end|>\n";
    } else if (m.role === "tool") {
      if (i === 0 || messages[i - 1]?.role !== "tool") out += "<|im_start|>user";
      out += `\n<tool_response>\n${content}\n</tool_response>`;
      if (i === messages.length - 1 || messages[i + 1]?.role !== "tool") out += "<|im_end|>\n";
    }
  });
  out += "<|im_start|>assistant\n";
  if (body.chat_template_kwargs?.enable_thinking === false) out += "<think>\n\n</think>\n\n";
  return out;
}

/** Token ids of a chat request's prompt, as llama.cpp reads them. */
export async function encodePrompt(body: Parameters<typeof renderQwen3Prompt>[0]): Promise<number[]> {
  return qwen3.encode(renderQwen3Prompt(body));
}

/** Token ids of a text (special tokens parsed), as `/tokenize` answers them. */
export async function encodeText(text: string): Promise<number[]> {
  return text === "" ? [] : qwen3.encode(text);
}

/** Tokens of a chat request's prompt, as llama.cpp counts them. */
export async function countPromptTokens(body: Parameters<typeof renderQwen3Prompt>[0]): Promise<number> {
  return (await qwen3.encode(renderQwen3Prompt(body))).length;
}

/** What a `/tokenize` body asks to count; llama.cpp tokenizes `content` (a string) and answers ids. */
export async function tokenizeBody(rawBody: string, lie?: number): Promise<{ status: number; body: unknown }> {
  let parsed: { content?: unknown };
  try {
    parsed = JSON.parse(rawBody) as { content?: unknown };
  } catch (error) {
    return {
      status: 500,
      body: {
        error: {
          code: 500,
          message: `[json.exception.parse_error.101] parse error: ${(error as Error).message}`,
          type: "server_error",
        },
      },
    };
  }
  if (typeof parsed.content !== "string") return { status: 200, body: { tokens: [] } };
  if (lie !== undefined) return { status: 200, body: { tokens: new Array<number>(lie).fill(151643) } };
  return { status: 200, body: { tokens: await qwen3.encode(parsed.content) } };
}
