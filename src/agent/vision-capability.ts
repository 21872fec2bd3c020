/**
 * Whether the model takes pictures (MODEL_VISION). `auto` asks llama.cpp's `GET /props` (is an mmproj loaded) or
 * Ollama's `POST /api/show` (capabilities); other servers cannot say: off. Answers are kept per model and asked again
 * after a while (the server may have restarted with another model); a failed probe counts as "no" only briefly.
 */
import { withDeadline } from "../shared/deadline.js";
import type { ModelServer } from "./model-dialect.js";
import { serverRoot } from "../shared/server-root.js";

/** MODEL_VISION. */
export type VisionMode = "auto" | "on" | "off";

/** Answers "does this model take images?". */
export interface VisionCapability {
  /** Shared by every conversation on that model: one probe, not tied to one job's signal. */
  supports(model: string): Promise<boolean>;
}

/** What the probe needs: the setting, where the server is and how to reach it. */
export interface VisionCapabilityOptions {
  mode: VisionMode;
  /** OPENAI_BASE_URL (the `/v1` root); the probes live beside it. */
  baseURL: string;
  modelServer: ModelServer;
  apiKey?: string;
  fetch?: typeof fetch;
  timeoutMs?: number;
  /** How long an answer is trusted (default 10 min). */
  ttlMs?: number;
  /** How long a failed probe counts as "no" before asking again (default 30 s). */
  failureTtlMs?: number;
  now?: () => number;
  onProbeFailed?: (error: unknown, model: string) => void;
}

/** Re-exported for the vision probe's callers and tests. */
export { serverRoot };

/** The part of llama.cpp's `/props` that speaks of pictures. */
type Props = { modalities?: { vision?: unknown }; multimodal?: unknown };

/** Creates the capability check with its per-model cache. */
export function createVisionCapability(opts: VisionCapabilityOptions): VisionCapability {
  const doFetch = opts.fetch ?? fetch;
  const now = opts.now ?? Date.now;
  const ttl = opts.ttlMs ?? 10 * 60_000;
  const failureTtl = opts.failureTtlMs ?? 30_000;
  const root = serverRoot(opts.baseURL);
  const cache = new Map<string, { answer: Promise<boolean>; expiresAt: number }>();

  // The deadline covers the body too, and is held for the whole call (AbortSignal.timeout is not).
  const request = (path: string, init: RequestInit): Promise<unknown> =>
    withDeadline(opts.timeoutMs ?? 5000, async (signal) => {
      const response = await doFetch(`${root}${path}`, {
        ...init,
        headers: {
          accept: "application/json",
          ...(opts.apiKey ? { authorization: `Bearer ${opts.apiKey}` } : {}),
          ...(init.headers ?? {}),
        },
        signal,
      });
      if (!response.ok) throw new Error(`${init.method ?? "GET"} ${path} answered HTTP ${response.status}`);
      return response.json();
    });

  const probe = async (model: string): Promise<boolean> => {
    switch (opts.modelServer) {
      case "llama.cpp": {
        // `modalities.vision`, or the older `multimodal` flag: an mmproj is loaded.
        const props = (await request("/props", { method: "GET" })) as Props | null;
        return props?.modalities?.vision === true || props?.multimodal === true;
      }
      case "ollama": {
        const show = (await request("/api/show", {
          method: "POST",
          body: JSON.stringify({ model }),
          headers: { "content-type": "application/json" },
        })) as { capabilities?: unknown } | null;
        return Array.isArray(show?.capabilities) && show.capabilities.includes("vision");
      }
      default:
        return false;
    }
  };

  return {
    async supports(model) {
      if (opts.mode !== "auto") return opts.mode === "on";
      const cached = cache.get(model);
      if (cached && cached.expiresAt > now()) return cached.answer;
      const entry = { answer: Promise.resolve(false), expiresAt: now() + ttl };
      entry.answer = probe(model).catch((error: unknown) => {
        entry.expiresAt = now() + failureTtl;
        opts.onProbeFailed?.(error, model);
        return false;
      });
      cache.set(model, entry);
      return entry.answer;
    },
  };
}
