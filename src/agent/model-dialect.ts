/**
 * The request fields that differ between OpenAI-compatible servers (MODEL_SERVER):
 * how Qwen3's thinking is switched, sampling defaults, the token cap's name.
 * What each server accepts, as checked against its docs and behaviour:
 *
 * - llama.cpp `llama-server --jinja`: `chat_template_kwargs: {enable_thinking}` is
 *   passed to the Jinja template (fixtures 08/09: `false` makes Qwen3's template add
 *   an empty `<think></think>`; `true` equals the default). Accepts `top_k`, `min_p`.
 * - vLLM: the same `chat_template_kwargs.enable_thinking` (vLLM's Qwen3 docs);
 *   `top_k`/`min_p` are accepted as sampling extensions.
 * - DashScope (compatible-mode): a top-level `enable_thinking` boolean (Model Studio
 *   "deep thinking" docs pass it through `extra_body`); unknown fields like top_k
 *   are not documented, so none are sent.
 * - Ollama `/v1`: thinking is on by default for thinking models and only
 *   `reasoning_effort: "none"` turns it off; sending `"high"` etc. to a model that
 *   cannot think is rejected, so nothing is sent to turn it on. `chat_template_kwargs`
 *   and `top_k` are ignored there.
 * - LM Studio: no documented per-request thinking switch in its OpenAI-compatible
 *   API (the model's own settings in LM Studio decide); send nothing special.
 * - OpenAI (or another hosted endpoint): nothing special; it rejects unknown fields,
 *   and `max_tokens` is deprecated there in favour of `max_completion_tokens`.
 *
 * Qwen3's text switches (`/think`, `/no_think` in the prompt) are not injected:
 * MODEL may not be a Qwen3.
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
  switch (server) {
    case "llama.cpp":
    case "vllm":
      return {
        ...common,
        max_tokens: settings.maxTokens,
        top_k: 20,
        min_p: 0,
        chat_template_kwargs: { enable_thinking: settings.enableThinking },
      };
    case "dashscope":
      return { ...common, max_tokens: settings.maxTokens, enable_thinking: settings.enableThinking };
    case "ollama":
      return {
        ...common,
        max_tokens: settings.maxTokens,
        ...(settings.enableThinking ? {} : { reasoning_effort: "none" }),
      };
    case "lmstudio":
      return { ...common, max_tokens: settings.maxTokens };
    case "openai":
      return { ...common, max_completion_tokens: settings.maxTokens };
  }
}
