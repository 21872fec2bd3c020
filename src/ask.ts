/**
 * `npm run ask -- "question"`: one question through the real agent loop and tools, streamed to the terminal.
 * No queue, no Redis, no platform: the quickest way to watch a model server behave.
 */
import { loadConfigOrExit } from "./config/load-config.js";
import type { Config } from "./config/env-schema.js";
import type { ToolInventory } from "./tools/tool-catalogue.js";
import { checkModelAnswers } from "./doctor/model-checks.js";
import { assertNever, type AgentEvent } from "./contracts/agent-events.js";
import { ModelError } from "./agent/model-error.js";
import { agentFromConfig } from "./app/agent-from-config.js";
import { botToolsFor, type BotTools } from "./app/tools-for-config.js";
import { McpConfigError } from "./tools/mcp/mcp-config.js";
import { createLogger, logFormatFor } from "./observability/logger.js";
import { configuredSecrets } from "./security/configured-secrets.js";

/** Where ask writes, injectable so the renderer stays testable. */
interface Terminal {
  write(text: string): void;
  color: boolean;
}

/** Renders agent events as a terminal transcript. */
function createRenderer(term: Terminal, showReasoning: boolean): { render(event: AgentEvent): void } {
  const dim = (s: string) => (term.color ? `\x1b[2m${s}\x1b[22m` : s);
  const bold = (s: string) => (term.color ? `\x1b[1m${s}\x1b[22m` : s);
  let last: "none" | "reasoning" | "text" | "tool" = "none";
  let roundText = "";
  const switchTo = (next: typeof last): void => {
    // Tool lines end with their own newline.
    if (last !== next && last !== "none" && last !== "tool") term.write("\n");
    last = next;
  };

  return {
    render(event) {
      switch (event.type) {
        case "reasoning-delta":
          if (!showReasoning) return;
          switchTo("reasoning");
          term.write(dim(event.text));
          return;
        case "text-delta":
          switchTo("text");
          roundText += event.text;
          term.write(event.text);
          return;
        case "tool-call":
          switchTo("tool");
          term.write(`🔧 ${bold(event.name)}(${event.arguments})…\n`);
          return;
        case "tool-result": {
          switchTo("tool");
          const preview = event.output.length > 300 ? `${event.output.slice(0, 300)}…` : event.output;
          term.write(
            `${dim(`${event.ok ? "✓" : "✗"} ${event.name} (${event.durationMs} ms): ${preview.replace(/\s+/g, " ")}`)}\n`,
          );
          return;
        }
        case "round-finish":
          if (event.reason === "tool_calls") roundText = "";
          return;
        case "finish": {
          // The fuse message (and any fallback) was never streamed: print what the user would get.
          if (event.text && event.text.trim() !== roundText.trim()) {
            switchTo("text");
            term.write(event.text);
          }
          term.write("\n");
          const notes: Record<typeof event.reason, string> = {
            stop: "",
            length: "[the answer was cut: max_tokens reached]",
            "max-rounds": "[stopped: MAX_TOOL_ROUNDS reached]",
            aborted: "[stopped]",
          };
          if (notes[event.reason]) term.write(`${bold(notes[event.reason])}\n`);
          const usage = event.usage
            ? `, ${event.usage.promptTokens} prompt + ${event.usage.completionTokens} completion tokens`
            : "";
          term.write(`${dim(`(${event.rounds} round${event.rounds === 1 ? "" : "s"}${usage})`)}\n`);
          return;
        }
        default:
          assertNever(event);
      }
    },
  };
}

const USAGE = [
  'usage: npm run ask -- "your question"   (= node dist/ask.js "your question")',
  "",
  "One question through the agent loop and its tools against OPENAI_BASE_URL, streamed here:",
  "reasoning dimmed, tool calls and their results shown. No Redis, no platform token.",
  "Settings come from the environment and .env, as for the bot (docs/configuration.md).",
].join("\n");

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  // Only as the whole command line: "--help" inside a question is a question.
  if (args.length === 1 && (args[0] === "--help" || args[0] === "-h")) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const question = args.join(" ").trim();
  if (!question) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  const config = loadConfigOrExit();

  // One line naming the server and how to start one, instead of a stack of retries.
  const { finding } = await checkModelAnswers(config, 3000);
  if (finding.status === "fail") {
    process.stderr.write(`✗ ${finding.detail}. To ask, ${finding.fix}.\n`);
    return 1;
  }

  // The same tools as the worker, MCP servers included; their notices go to stderr, away from the answer.
  let tools: BotTools;
  try {
    const level = config.LOG_LEVEL === "info" ? "warn" : config.LOG_LEVEL;
    tools = await botToolsFor(
      config,
      createLogger({
        level,
        name: "ask",
        secrets: configuredSecrets(config),
        destination: process.stderr,
        format: logFormatFor(config.LOG_FORMAT, process.stderr.isTTY === true),
      }),
    );
  } catch (error) {
    if (error instanceof McpConfigError) {
      process.stderr.write(`${error.message}\n`);
      return 2;
    }
    throw error;
  }
  tools.mcp?.start();
  // A one-shot question cannot wait for a later reconnect: give the servers one try to come up.
  await tools.mcp?.settled(config.TOOL_TIMEOUT_MS);
  try {
    return await ask(config, question, tools.catalogue);
  } finally {
    await tools.close();
  }
}

async function ask(config: Config, question: string, tools: ToolInventory): Promise<number> {
  const controller = new AbortController();
  process.once("SIGINT", () => controller.abort());
  const renderer = createRenderer(
    { write: (t) => process.stdout.write(t), color: process.stdout.isTTY === true },
    config.SHOW_REASONING !== "off",
  );
  const agent = agentFromConfig(config, tools);

  try {
    let reason = "stop";
    for await (const event of agent.run([{ role: "user", content: question }], controller.signal)) {
      renderer.render(event);
      if (event.type === "finish") reason = event.reason;
    }
    return reason === "aborted" ? 130 : 0;
  } catch (error) {
    if (error instanceof ModelError) {
      process.stderr.write(
        `\nmodel server error (${error.code}${error.status ? `, HTTP ${error.status}` : ""}): ${error.message}\n`,
      );
      process.stderr.write(`is a model server running at ${config.OPENAI_BASE_URL}?\n`);
      return 1;
    }
    throw error;
  }
}

process.exitCode = await main();
