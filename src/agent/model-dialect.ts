/**
 * The request fields that differ between OpenAI-compatible servers (MODEL_SERVER), as each one's docs and behaviour say:
 * - llama.cpp (`--jinja`) and vLLM: `chat_template_kwargs.enable_thinking` reaches the template (`false` makes
 *   Qwen3's add an empty `<think></think>`); both accept `top_k` and `min_p`.
 * - DashScope: a top-level `enable_thinking`; other extra fields are undocumented, so none are sent.
 * - Ollama `/v1`: thinks by default and only `reasoning_effort: "none"` turns it off; "high" is rejected by a model
 *   that cannot think, so nothing turns it on. `chat_template_kwargs` and `top_k` are ignored there.
 * - LM Studio: no per-request thinking switch (the model's settings decide).
 * - OpenAI: rejects unknown fields; `max_tokens` is deprecated for `max_completion_tokens`.
 * Qwen3's `/think` and `/no_think` are not injected: MODEL may not be a Qwen3.
 */
import type { Config } from "../config/env-schema.js";

/** A value of MODEL_SERVER. */
export type ModelServer = Config["MODEL_SERVER"];

/** Sampling the request will carry. */
export interface SamplingSettings {
  enableThinking: boolean;
  maxTokens: number;
  temperature?: number;
  topP?: number;
}

/** Qwen3's guidance: thinking 0.6 / 0.95, non-thinking 0.7 / 0.8 (top_k 20, min_p 0 for both). */
export function defaultSampling(enableThinking: boolean): { temperature: number; topP: number } {
  return enableThinking ? { temperature: 0.6, topP: 0.95 } : { temperature: 0.7, topP: 0.8 };
}

/** The dialect-specific part of a chat.completions request body. */
export function dialectFields(server: ModelServer, settings: SamplingSettings): Record<string, unknown> {
  const defaults = defaultSampling(settings.enableThinking);
  const common = {
    temperature: settings.temperature ?? defaults.temperature,
    top_p: settings.topP ?? defaults.topP,
  };
  if (server === "openai") return { ...common, max_completion_tokens: settings.maxTokens };
  const fields = { ...common, max_tokens: settings.maxTokens };
  switch (server) {
    case "llama.cpp":
    case "vllm":
      return { ...fields, top_k: 20, min_p: 0, chat_template_kwargs: { enable_thinking: settings.enableThinking } };
    case "dashscope":
      return { ...fields, enable_thinking: settings.enableThinking };
    case "ollama":
      return settings.enableThinking ? fields : { ...fields, reasoning_effort: "none" };
    case "lmstudio":
      return fields;
  }
}
