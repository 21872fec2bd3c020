/** The one place configuration becomes the agent, so the worker, the terminal chat and `npm run ask` cannot drift apart. */
import type { Config } from "../config/env-schema.js";
import type { ChatMessage } from "../contracts/chat-message.js";
import type { AgentEvent } from "../contracts/agent-events.js";
import { createModelClient } from "../agent/model-client.js";
import { runAgent, type AgentDeps, type AgentInput } from "../agent/run-agent.js";
import type { AgentTool } from "../tools/tool.js";
import type { ConversationSettings } from "../settings/conversation-settings.js";
import type { ContextWindow } from "../tokens/context-window.js";
import { contextWindowFor } from "./context-window-for-config.js";

/** How one answer runs: the conversation's settings, and how to cut its history after a context-size refusal. */
export interface AgentRunOptions {
  settings?: ConversationSettings;
  shrinkHistory?: AgentInput["shrinkHistory"];
  conversation?: AgentInput["conversation"];
}

/** An agent bound to the configured model and tools. */
export interface ConfiguredAgent {
  deps: AgentDeps;
  /** Runs the loop on a conversation, with that conversation's settings when known. */
  run(messages: ChatMessage[], signal: AbortSignal, opts?: AgentRunOptions): AsyncIterable<AgentEvent>;
}

/** The configured model client; `contextWindow` gives Ollama's `num_ctx`. */
export function modelClientFor(config: Config, contextWindow: () => Promise<ContextWindow>): AgentDeps["client"] {
  return createModelClient({
    baseURL: config.OPENAI_BASE_URL,
    apiKey: config.OPENAI_API_KEY,
    timeoutMs: config.MODEL_TIMEOUT_MS,
    server: config.MODEL_SERVER,
    contextTokens: async () => (await contextWindow()).tokens,
    keepAlive: config.MODEL_KEEP_ALIVE,
  });
}

/** Builds the agent; `contextWindow` is shared with the token budget, so Ollama's `num_ctx` is the figure it counts with. */
export function agentFromConfig(
  config: Config,
  tools: { forRequest(isEnabled?: (name: string) => boolean): AgentTool[] },
  contextWindow: () => Promise<ContextWindow> = contextWindowFor(config),
): ConfiguredAgent {
  const deps: AgentDeps = {
    client: modelClientFor(config, contextWindow),
    model: config.MODEL,
    modelServer: config.MODEL_SERVER,
    enableThinking: config.ENABLE_THINKING,
    maxToolRounds: config.MAX_TOOL_ROUNDS,
    maxTokens: config.MODEL_MAX_TOKENS,
    ...(config.MODEL_TEMPERATURE !== undefined ? { temperature: config.MODEL_TEMPERATURE } : {}),
    ...(config.MODEL_TOP_P !== undefined ? { topP: config.MODEL_TOP_P } : {}),
    toolTimeoutMs: config.TOOL_TIMEOUT_MS,
    tools: tools.forRequest(),
  };
  return {
    deps,
    run: (messages, signal, { settings, shrinkHistory, conversation } = {}) => {
      // Tools are read per answer: MCP servers come and go while a worker runs. The conversation's
      // switched-off tools are taken out before the per-request cap, not after.
      const off = new Set(settings?.toolsOff ?? []);
      const answerDeps: AgentDeps = {
        ...deps,
        tools: tools.forRequest((name) => !off.has(name)),
        ...(settings
          ? {
              model: settings.model,
              enableThinking: settings.thinking,
              ...(settings.persona ? { persona: settings.persona } : {}),
              ...(settings.timeZone ? { timeZone: settings.timeZone } : {}),
            }
          : {}),
      };
      return runAgent(answerDeps, {
        messages,
        signal,
        ...(shrinkHistory ? { shrinkHistory } : {}),
        ...(conversation ? { conversation } : {}),
      });
    },
  };
}
