/** What to tell a user about their kind of model server (MODEL_SERVER), in one place. */
import type { ModelServer } from "../agent/model-dialect.js";

/** The command that starts the default model locally. */
export const LLAMA_SERVER_COMMAND = "llama-server -hf Qwen/Qwen3-1.7B-GGUF:Q8_0 --jinja";

/** How to make this kind of server return structured tool calls. */
export function toolSupportFix(server: ModelServer): string {
  switch (server) {
    case "llama.cpp":
      return `start llama-server with --jinja (its chat template parses tool calls), e.g. ${LLAMA_SERVER_COMMAND}`;
    case "vllm":
      return "start vLLM with --enable-auto-tool-choice --tool-call-parser hermes";
    case "ollama":
      return "use a model with tool support (`ollama show MODEL` lists tools among its capabilities; ollama pull qwen3:1.7b) and update Ollama";
    case "lmstudio":
      return "load a model whose template supports tools (Qwen3) and update LM Studio";
    case "dashscope":
    case "openai":
      return "use a model of this endpoint that supports tool calls, or set MODEL_SERVER to the server you really run";
  }
}

/** The request field this kind of server reads to switch thinking off. */
export function thinkingSwitchOf(server: ModelServer): string | undefined {
  switch (server) {
    case "llama.cpp":
    case "vllm":
      return "chat_template_kwargs.enable_thinking";
    case "dashscope":
      return "enable_thinking";
    case "ollama":
      return "think: false on /api/chat";
    case "lmstudio":
    case "openai":
      return undefined;
  }
}
