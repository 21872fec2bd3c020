/**
 * The models `/model` may switch to: MODEL_CHOICES, else what `GET {OPENAI_BASE_URL}/models` lists, cached for a
 * minute. When the server cannot be asked, MODEL is the only choice (logged), never an error to the user.
 */
import { z } from "zod";
import { withDeadline } from "../shared/deadline.js";

/** Where the server's model list is read. */
export interface ModelChoicesOptions {
  /** MODEL_CHOICES; undefined = ask the server. */
  configured?: readonly string[];
  /** MODEL: always offered, so a conversation can go back to the default. */
  defaultModel: string;
  baseUrl: string;
  apiKey: string;
  fetch?: typeof fetch;
  cacheMs?: number;
  timeoutMs?: number;
  now?: () => number;
  logger?: { warn(obj: object, msg?: string): void };
}

/** The choices, freshly enough. */
export interface ModelChoices {
  list(): Promise<string[]>;
}

// OpenAI's shape; llama.cpp, Ollama and vLLM all answer with it (llama.cpp adds an Ollama-style `models` too).
const modelsBody = z.object({ data: z.array(z.object({ id: z.string().min(1).max(200) }).loose()) }).loose();

/** Creates the source of model choices. */
export function createModelChoices(opts: ModelChoicesOptions): ModelChoices {
  const doFetch = opts.fetch ?? fetch;
  const now = opts.now ?? Date.now;
  const cacheMs = opts.cacheMs ?? 60_000;
  let cached: { at: number; models: string[] } | undefined;
  const withDefault = (models: readonly string[]) => [...new Set([opts.defaultModel, ...models])];

  // The deadline covers the body too, and is held for the whole call (AbortSignal.timeout is not).
  const ask = (): Promise<string[]> =>
    withDeadline(opts.timeoutMs ?? 3000, async (signal) => {
      const res = await doFetch(`${opts.baseUrl.replace(/\/+$/, "")}/models`, {
        headers: { authorization: `Bearer ${opts.apiKey}` },
        signal,
      });
      if (!res.ok) throw new Error(`GET /models answered HTTP ${res.status}`);
      return modelsBody.parse(await res.json()).data.map((m) => m.id);
    });

  return {
    async list() {
      if (opts.configured) return withDefault(opts.configured);
      if (cached && now() - cached.at < cacheMs) return cached.models;
      try {
        cached = { at: now(), models: withDefault(await ask()) };
        return cached.models;
      } catch (error) {
        opts.logger?.warn(
          { err: error instanceof Error ? error.message : String(error) },
          "could not list the server's models; offering the default only",
        );
        return withDefault([]);
      }
    },
  };
}
