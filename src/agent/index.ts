/** The agent's public surface: the loop, its client and its typed error. */
export { runAgent, type AgentDeps, type AgentInput } from "./run-agent.js";
export { createModelClient, type ModelClientOptions } from "./model-client.js";
export { ModelError, toModelError, type ModelErrorCode } from "./model-error.js";
export { buildSystemPrompt, type SystemPromptOptions } from "./system-prompt.js";
export { defaultSampling, dialectFields, type ModelServer } from "./model-dialect.js";
export { createToolRunner, type ToolOutcome, type ToolRunner, type ToolRunnerOptions } from "./tool-runner.js";
export {
  createStreamAccumulator,
  generateToolCallId,
  type RoundOutcome,
  type StreamDelta,
} from "./stream-accumulator.js";
export { streamRound, type StreamRoundOptions, type StreamRoundResult } from "./stream-round.js";
export {
  assertNever,
  type AgentEvent,
  type FinishReason,
  type RoundFinishReason,
  type Usage,
} from "../contracts/agent-events.js";
export type { ChatMessage, ToolCallRecord } from "../contracts/chat-message.js";
