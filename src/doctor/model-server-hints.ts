/** What to tell a user about their kind of model server (MODEL_SERVER), in one place. */
import type { ModelServer } from "../agent/model-dialect.js";

/** The command that starts the default model locally. */
export const LLAMA_SERVER_COMMAND = "llama-server -hf Qwen/Qwen3-1.7B-GGUF:Q8_0 --jinja";

const HOSTED_TOOL_FIX =
  "use a model of this endpoint that supports tool calls, or set MODEL_SERVER to the server you really run";

/** How to make each kind of server return structured tool calls. */
export const TOOL_SUPPORT_FIX: Record<ModelServer, string> = {
  "llama.cpp": `start llama-server with --jinja (its chat template parses tool calls), e.g. ${LLAMA_SERVER_COMMAND}`,
  vllm: "start vLLM with --enable-auto-tool-choice --tool-call-parser hermes",
  ollama:
    "use a model with tool support (`ollama show MODEL` lists tools among its capabilities; ollama pull qwen3:1.7b) and update Ollama",
  lmstudio: "load a model whose template supports tools (Qwen3) and update LM Studio",
  dashscope: HOSTED_TOOL_FIX,
  openai: HOSTED_TOOL_FIX,
};

/** The request field each kind of server reads to switch thinking off; none for LM Studio and OpenAI. */
export const THINKING_SWITCH: Record<ModelServer, string | undefined> = {
  "llama.cpp": "chat_template_kwargs.enable_thinking",
  vllm: "chat_template_kwargs.enable_thinking",
  dashscope: "enable_thinking",
  ollama: "think: false on /api/chat",
  lmstudio: undefined,
  openai: undefined,
};
