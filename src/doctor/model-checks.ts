/**
 * Model server checks, in the order a user would debug them. Probes are tiny (thinking off) so a CPU server
 * answers quickly; with MODEL_SERVER=ollama they go through the bot's own /api/chat translation.
 */
import type { Config } from "../config/env-schema.js";
import { maskedValue } from "../config/load-config.js";
import { timeoutSignal } from "../shared/deadline.js";
import { dialectFields } from "../agent/model-dialect.js";
import { serverRoot } from "../shared/server-root.js";
import { createOllamaFetch } from "../agent/ollama-fetch.js";
import { resolveContextWindow, type ContextWindow } from "../tokens/context-window.js";
import { findingsOf, type SetupFinding } from "../contracts/setup-finding.js";
import { describeFetchError, errorMessageOf, probeChat } from "./chat-probe.js";
import { LLAMA_SERVER_COMMAND, THINKING_SWITCH, TOOL_SUPPORT_FIX } from "./model-server-hints.js";

const f = findingsOf("Model server");
const OVERLOAD_FIX = "check that the server is not overloaded; raise MODEL_TIMEOUT_MS for a slow machine";

/** Room the system prompt and the tool schemas take in every request (measured on the built-in tools, rounded up). */
export const PROMPT_ALLOWANCE_TOKENS = 1500;
/** Below this, thinking leaves nothing for the answer: Qwen3 often reasons for 500–1500 tokens. */
export const MIN_THINKING_MAX_TOKENS = 1024;

const PROBE_TOOL = {
  type: "function",
  function: {
    name: "doctor_probe",
    description: "Checks that tool calling works. Call it whenever the user asks you to.",
    parameters: {
      type: "object",
      properties: { word: { type: "string", description: "the word to echo" } },
      required: ["word"],
    },
  },
};

/** What the server lists (GET {base}/models, or Ollama's /api/tags). */
interface ModelsListing {
  ids: string[];
  contextTokens?: number;
}

/** The server's root: OPENAI_BASE_URL without its `/v1`. */
const rootOf = (config: Config): string => serverRoot(config.OPENAI_BASE_URL);

/** The context the bot sends Ollama as `num_ctx`: MODEL_CONTEXT_TOKENS, else MODEL's `/api/show`, else 8192. */
export function ollamaContextWindow(config: Config, timeoutMs = 3000): Promise<ContextWindow> {
  return resolveContextWindow({
    configured: config.MODEL_CONTEXT_TOKENS,
    serverRoot: rootOf(config),
    apiKey: config.OPENAI_API_KEY,
    ollamaModel: config.MODEL,
    timeoutMs,
  });
}

/** Sends `content` as the one user message, thinking off. */
function probe(config: Config, content: string, maxTokens: number, extra: Record<string, unknown> = {}) {
  const target = {
    baseUrl: config.OPENAI_BASE_URL,
    apiKey: config.OPENAI_API_KEY,
    timeoutMs: Math.min(config.MODEL_TIMEOUT_MS, 60_000),
    ...(config.MODEL_SERVER === "ollama"
      ? {
          fetch: createOllamaFetch({
            serverRoot: rootOf(config),
            contextTokens: async () => (await ollamaContextWindow(config)).tokens,
            keepAlive: config.MODEL_KEEP_ALIVE,
          }),
        }
      : {}),
  };
  return probeChat(target, {
    model: config.MODEL,
    messages: [{ role: "user", content }],
    ...dialectFields(config.MODEL_SERVER, { enableThinking: false, maxTokens }),
    ...extra,
  });
}

/** The server answers GET {base}/models; on success also returns what it lists. */
export async function checkModelAnswers(
  config: Config,
  timeoutMs = 3000,
): Promise<{ finding: SetupFinding; listing?: ModelsListing }> {
  const ollama = config.MODEL_SERVER === "ollama";
  const base = config.OPENAI_BASE_URL.replace(/\/+$/, "");
  // Shown without user:password@ and query values (`?key=`): the report is pasted into issues.
  const shown = maskedValue(base);
  const fail = (detail: string, fix: string) => ({ finding: f.fail("answers", detail, fix) });
  const urlFix = ollama
    ? "OPENAI_BASE_URL must be Ollama's address (http://host:11434/v1), or set MODEL_SERVER to the server you run"
    : "OPENAI_BASE_URL must be the server's OpenAI API root, usually ending in /v1";
  // Ollama's own listing, at the root beside /api/chat, is what the bot relies on there.
  const listingPath = ollama ? `${rootOf(config)}/api/tags` : `${base}/models`;
  const listingShown = ollama ? maskedValue(listingPath) : `${shown}/models`;
  let res: Response;
  try {
    res = await fetch(listingPath, {
      headers: { authorization: `Bearer ${config.OPENAI_API_KEY}` },
      signal: timeoutSignal(timeoutMs),
    });
  } catch (error) {
    return fail(
      `no model server answers at ${shown} (${describeFetchError(error)})`,
      ollama
        ? "start Ollama (ollama serve; in Docker it must listen beyond loopback: OLLAMA_HOST=0.0.0.0), or set OPENAI_BASE_URL to its address (http://host:11434/v1)"
        : `start one: ${LLAMA_SERVER_COMMAND} (or set OPENAI_BASE_URL to your server)`,
    );
  }
  const text = await res.text();
  if (res.status === 401 || res.status === 403)
    return fail(
      `${shown} refuses the key (HTTP ${res.status}: ${errorMessageOf(text)})`,
      "set OPENAI_API_KEY to a key this server accepts",
    );
  if (res.status === 503)
    return fail(
      `${shown} is still loading the model (${errorMessageOf(text)})`,
      "wait until the model is loaded, then run the doctor again",
    );
  if (!res.ok) return fail(`${listingShown} answered HTTP ${res.status} (${errorMessageOf(text)})`, urlFix);
  try {
    if (ollama) {
      const tags = JSON.parse(text) as { models?: { name?: unknown; model?: unknown }[] };
      if (!Array.isArray(tags.models)) throw new Error("no models list");
      const ids = tags.models.flatMap((m) => [m.name, m.model]).filter((n): n is string => typeof n === "string");
      return { finding: f.pass("answers", `Ollama answers at ${shown}`), listing: { ids: [...new Set(ids)] } };
    }
    const body = JSON.parse(text) as { data?: { id?: string; meta?: { n_ctx?: number }; max_model_len?: number }[] };
    const data = body.data ?? [];
    const contextTokens = data
      .map((m) => m.meta?.n_ctx ?? m.max_model_len)
      .find((n): n is number => typeof n === "number");
    const ids = data.map((m) => String(m.id ?? "")).filter(Boolean);
    return {
      finding: f.pass("answers", `answers at ${shown}`),
      listing: { ids, ...(contextTokens ? { contextTokens } : {}) },
    };
  } catch {
    return fail(
      ollama
        ? `${listingShown} is not Ollama's model list: not an Ollama server`
        : `${shown}/models is not JSON: not an OpenAI-compatible server`,
      urlFix,
    );
  }
}

/** MODEL is served. llama.cpp serves one model whatever the request names, so there one model is enough. */
export function checkModelListed(config: Config, listing: ModelsListing): SetupFinding {
  if (isServed(config, listing, config.MODEL)) return f.pass("model", `serves ${config.MODEL}`);
  if (config.MODEL_SERVER === "llama.cpp" && listing.ids.length === 1)
    return f.pass(
      "model",
      `serves ${listing.ids[0]} (llama.cpp answers every request with its one model, whatever MODEL says)`,
    );
  const listed = listing.ids.length ? listing.ids.join(", ") : "nothing";
  return f.fail(
    "model",
    `MODEL=${config.MODEL} is not served (the server lists ${listed})`,
    listing.ids.length ? `set MODEL to one of: ${listing.ids.join(", ")}` : "load a model into the server",
  );
}

/** Whether the listing has `model`; Ollama takes a name without a tag as `:latest`. */
function isServed(config: Config, listing: ModelsListing, model: string): boolean {
  if (listing.ids.includes(model)) return true;
  return config.MODEL_SERVER === "ollama" && !model.includes(":") && listing.ids.includes(`${model}:latest`);
}

/** Every model `/model` may switch to (MODEL_CHOICES) is served; none when there is nothing to check. */
export function checkModelChoices(config: Config, listing: ModelsListing): SetupFinding[] {
  const choices = config.MODEL_CHOICES;
  // llama.cpp with one model answers every name with it: there is nothing to switch between, and nothing to check.
  if (!choices?.length || (config.MODEL_SERVER === "llama.cpp" && listing.ids.length === 1)) return [];
  const missing = choices.filter((name) => !isServed(config, listing, name));
  if (missing.length === 0)
    return [f.pass("model choices", `serves every model of MODEL_CHOICES (${choices.join(", ")})`)];
  return [
    f.fail(
      "model choices",
      `MODEL_CHOICES names models the server does not serve: ${missing.join(", ")} (switching to one fails every answer)`,
      `load them into the server, or keep MODEL_CHOICES to what it lists: ${listing.ids.join(", ") || "nothing"}`,
    ),
  ];
}

/** A streamed request comes back as server-sent events. */
export async function checkStreams(config: Config): Promise<SetupFinding> {
  const result = await probe(config, "Say OK.", 16);
  if (result.kind === "network-error")
    return f.fail("streams", `the streamed request failed (${result.message})`, OVERLOAD_FIX);
  if (result.kind === "http-error")
    return f.fail(
      "streams",
      `a streamed request answered HTTP ${result.status}: ${result.message}`,
      "check MODEL and MODEL_SERVER against the server you run",
    );
  if (result.streamError)
    return f.fail(
      "streams",
      `the stream ended with an error: ${result.streamError}`,
      "look at the model server's log; a different quantisation or an updated server usually helps",
    );
  if (result.chunks === 0)
    return f.fail(
      "streams",
      `a streamed request got no server-sent events (Content-Type ${result.contentType || "none"})`,
      "use a server (or proxy) that streams chat completions; a buffering proxy must pass text/event-stream through",
    );
  return f.pass("streams", `streams (${result.chunks} chunks${result.sawDone ? "" : ", no [DONE]"})`);
}

/** A probe tool comes back as a structured tool call, not as text and not dropped. */
export async function checkToolCalls(config: Config): Promise<SetupFinding> {
  const result = await probe(config, 'Call the tool doctor_probe with the word "ping". Do not answer in text.', 256, {
    tools: [PROBE_TOOL],
    tool_choice: "auto",
    parallel_tool_calls: true,
  });
  const fix = TOOL_SUPPORT_FIX[config.MODEL_SERVER];
  if (result.kind === "network-error")
    return f.fail("tool calls", `the tool request failed (${result.message})`, OVERLOAD_FIX);
  if (result.kind === "http-error")
    return f.fail(
      "tool calls",
      `the server refuses requests with tools (HTTP ${result.status}: ${result.message})`,
      fix,
    );
  if (result.toolCalls.includes("doctor_probe"))
    return f.pass("tool calls", "returns structured tool calls (the probe tool was called)");
  if (/<tool_call>|"name"\s*:\s*"doctor_probe"/.test(result.content))
    return f.fail(
      "tool calls",
      "tool calls come back as plain text in the answer (<tool_call>…), not as structured tool_calls",
      fix,
    );
  if (result.toolCalls.length > 0)
    return f.fail(
      "tool calls",
      `the model called ${result.toolCalls.join(", ")} instead of the probe tool`,
      "use a model that follows tool instructions (Qwen3 does)",
    );
  return f.fail(
    "tool calls",
    "the model answered without calling the probe tool: the server ignored the tools it was sent",
    fix,
  );
}

/** With thinking switched off the way MODEL_SERVER says, no reasoning comes back. */
export async function checkThinkingSwitch(config: Config): Promise<SetupFinding> {
  const field = THINKING_SWITCH[config.MODEL_SERVER];
  if (!field)
    return f.skip(
      "thinking switch",
      `MODEL_SERVER=${config.MODEL_SERVER} has no per-request thinking switch (the server's own settings decide)`,
    );
  const result = await probe(config, "Say OK.", 64);
  if (result.kind !== "stream")
    return f.fail(
      "thinking switch",
      `the request failed (${result.kind === "http-error" ? `HTTP ${result.status}: ` : ""}${result.message})`,
      "fix the checks above first",
    );
  if (result.reasoning.trim() === "") return f.pass("thinking switch", `thinking switches off (${field})`);
  return f.fail(
    "thinking switch",
    `reasoning came back with thinking switched off: the server ignores ${field}`,
    "set MODEL_SERVER to the server you really run (llama.cpp, vllm, ollama, lmstudio, dashscope, openai); llama.cpp needs --jinja for it",
  );
}

/** Thinking on with a tiny completion budget gives empty answers: the reasoning eats it all. */
export function checkThinkingBudget(config: Config): SetupFinding {
  if (!config.ENABLE_THINKING)
    return f.pass("token budget", `thinking is off; MODEL_MAX_TOKENS=${config.MODEL_MAX_TOKENS} is all for the answer`);
  if (config.MODEL_MAX_TOKENS >= MIN_THINKING_MAX_TOKENS)
    return f.pass(
      "token budget",
      `MODEL_MAX_TOKENS=${config.MODEL_MAX_TOKENS} leaves room for thinking and the answer`,
    );
  return f.fail(
    "token budget",
    `thinking is on and MODEL_MAX_TOKENS=${config.MODEL_MAX_TOKENS}: the reasoning uses up the budget and answers come back empty`,
    "set MODEL_MAX_TOKENS=4096 (or ENABLE_THINKING=false)",
  );
}

/** The tokens a full request takes, and the sum that says so. */
function requestSize(config: Config): { needed: number; sum: string } {
  const needed = config.MODEL_MAX_TOKENS + config.HISTORY_MAX_TOKENS + PROMPT_ALLOWANCE_TOKENS;
  const sum = `MODEL_MAX_TOKENS ${config.MODEL_MAX_TOKENS} + HISTORY_MAX_TOKENS ${config.HISTORY_MAX_TOKENS} + about ${PROMPT_ALLOWANCE_TOKENS} for the prompt and tools = ${needed}`;
  return { needed, sum };
}

/** The server's context holds the history, the prompt and a whole completion. */
export async function checkContext(config: Config, listing: ModelsListing, timeoutMs = 3000): Promise<SetupFinding> {
  if (config.MODEL_SERVER === "ollama") return checkOllamaContext(config, timeoutMs);
  const contextTokens = (await propsContext(config, timeoutMs)) ?? listing.contextTokens;
  if (contextTokens === undefined) return f.skip("context", "the server does not report its context size");
  const { needed, sum } = requestSize(config);
  if (contextTokens >= needed)
    return f.pass("context", `context of ${contextTokens} tokens holds a full request (${sum})`);
  return f.fail(
    "context",
    `context of ${contextTokens} tokens is too small for ${sum}: long conversations fail with "exceeds the available context size"`,
    `start llama-server with -c ${Math.ceil(needed / 4096) * 4096} or more (with an explicit --parallel N each request gets only c/N unless you add --kv-unified), or lower MODEL_MAX_TOKENS / HISTORY_MAX_TOKENS`,
  );
}

/** Ollama gives each request its `num_ctx`, and the bot's budget counts with it: too small only keeps less history. */
async function checkOllamaContext(config: Config, timeoutMs: number): Promise<SetupFinding> {
  const window = await ollamaContextWindow(config, timeoutMs);
  const from =
    window.source === "config"
      ? "MODEL_CONTEXT_TOKENS"
      : window.source === "server"
        ? `/api/show: ${window.detail}`
        : "the default: /api/show did not say";
  const { needed, sum } = requestSize(config);
  if (window.tokens >= needed)
    return f.pass("context", `num_ctx ${window.tokens} (${from}) holds a full request (${sum})`);
  return f.warn(
    "context",
    `num_ctx ${window.tokens} (${from}) is smaller than ${sum}: the bot keeps less history to fit`,
    `set MODEL_CONTEXT_TOKENS=${Math.ceil(needed / 4096) * 4096} (Ollama allocates what num_ctx asks for; mind the memory), or lower MODEL_MAX_TOKENS / HISTORY_MAX_TOKENS`,
  );
}

/** llama.cpp's GET /props (at the server root, beside /v1) reports the context a request gets. */
async function propsContext(config: Config, timeoutMs: number): Promise<number | undefined> {
  try {
    const res = await fetch(`${rootOf(config)}/props`, {
      headers: { authorization: `Bearer ${config.OPENAI_API_KEY}` },
      signal: timeoutSignal(timeoutMs),
    });
    if (!res.ok) return undefined;
    const body = (await res.json()) as { default_generation_settings?: { n_ctx?: number } };
    const n = body.default_generation_settings?.n_ctx;
    return typeof n === "number" && n > 0 ? n : undefined;
  } catch {
    return undefined; // not llama.cpp (or an old one): fall back to what /models said
  }
}

/** Ollama's version at `root`; "" when only /api/tags answers (a proxy passing some paths); undefined if not Ollama. */
async function ollamaAt(root: string, timeoutMs = 3000): Promise<string | undefined> {
  const ask = async (path: string): Promise<Record<string, unknown> | undefined> => {
    try {
      const response = await fetch(`${root}${path}`, { signal: timeoutSignal(timeoutMs) });
      if (!response.ok) {
        await response.body?.cancel();
        return undefined;
      }
      return (await response.json()) as Record<string, unknown>;
    } catch {
      return undefined; // not up: the answers check says so
    }
  };
  const version = await ask("/api/version");
  if (typeof version?.version === "string") return version.version;
  const tags = await ask("/api/tags");
  return Array.isArray(tags?.models) ? "" : undefined;
}

/**
 * Which API the bot talks to: Ollama's native /api/chat with MODEL_SERVER=ollama, else the OpenAI-compatible /v1.
 * Ollama through /v1 fails: it ignores `num_ctx` and silently cuts long prompts, tool definitions first.
 */
export async function checkModelApi(config: Config): Promise<SetupFinding> {
  const root = rootOf(config);
  const version = await ollamaAt(root);
  if (config.MODEL_SERVER === "ollama") {
    if (version === undefined)
      return f.fail(
        "api",
        `MODEL_SERVER=ollama, but no Ollama answers /api/version or /api/tags at ${maskedValue(root)}: the bot talks to Ollama's native /api/chat there`,
        "set OPENAI_BASE_URL to Ollama's address (http://host:11434/v1), or MODEL_SERVER to the server you really run",
      );
    const window = await ollamaContextWindow(config);
    return f.pass(
      "api",
      `Ollama${version ? ` ${version}` : ""}'s native API (${maskedValue(root)}/api/chat), every request with num_ctx ${window.tokens} and keep_alive ${config.MODEL_KEEP_ALIVE}`,
    );
  }
  if (version !== undefined)
    return f.fail(
      "api",
      "an Ollama server reached through its OpenAI-compatible /v1, which ignores num_ctx and cuts long prompts (tool definitions first)",
      "set MODEL_SERVER=ollama: the bot then uses Ollama's native /api/chat with num_ctx",
    );
  return f.pass("api", `the OpenAI-compatible API (${maskedValue(config.OPENAI_BASE_URL)}/chat/completions)`);
}

/** Runs the model checks; the request checks are skipped when the server does not answer. */
export async function checkModelServer(config: Config): Promise<SetupFinding[]> {
  const answers = await checkModelAnswers(config);
  const budget = checkThinkingBudget(config);
  if (!answers.listing) return [answers.finding, f.skip("requests", "skipped: the server does not answer"), budget];
  return [
    answers.finding,
    await checkModelApi(config),
    checkModelListed(config, answers.listing),
    ...checkModelChoices(config, answers.listing),
    await checkStreams(config),
    await checkToolCalls(config),
    await checkThinkingSwitch(config),
    budget,
    await checkContext(config, answers.listing),
  ];
}
