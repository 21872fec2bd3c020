/**
 * Prometheus metrics (prom-client) on a registry of our own (no global
 * singleton), so tests and several roles in one process do not collide.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";

/** Every metric the bot exports. */
export interface Metrics {
  registry: Registry;
  messagesIn: Counter<"platform" | "outcome">;
  jobs: Counter<"outcome">;
  queueDepth: Gauge<"state">;
  firstVisibleSeconds: Histogram<"platform">;
  modelFirstTokenSeconds: Histogram;
  modelTokensPerSecond: Histogram;
  platformRequests: Counter<"platform" | "kind" | "outcome">;
  toolCalls: Counter<"tool" | "outcome">;
  activeConversations: Gauge;
}

/** Creates the metrics on a fresh registry; `defaults` adds process CPU/memory metrics. */
export function createMetrics(opts: { defaults?: boolean } = {}): Metrics {
  const registry = new Registry();
  if (opts.defaults) collectDefaultMetrics({ register: registry });
  const registers = [registry];
  return {
    registry,
    messagesIn: new Counter({
      name: "chatbot_messages_in_total",
      help: "Messages offered by the adapters, by outcome (queued, duplicate, refused)",
      labelNames: ["platform", "outcome"],
      registers,
    }),
    jobs: new Counter({
      name: "chatbot_jobs_total",
      help: "Jobs finished by outcome (done, failed, retried, cancelled)",
      labelNames: ["outcome"],
      registers,
    }),
    queueDepth: new Gauge({ name: "chatbot_queue_depth", help: "Jobs in the queue by state", labelNames: ["state"], registers }),
    firstVisibleSeconds: new Histogram({
      name: "chatbot_first_visible_seconds",
      help: "From the message's arrival to the first thing the user sees",
      labelNames: ["platform"],
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    }),
    modelFirstTokenSeconds: new Histogram({
      name: "chatbot_model_first_token_seconds",
      help: "Model request to its first streamed token",
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30],
      registers,
    }),
    modelTokensPerSecond: new Histogram({
      name: "chatbot_model_tokens_per_second",
      help: "Completion tokens per second of streaming, per model round",
      buckets: [1, 5, 10, 20, 40, 80, 160],
      registers,
    }),
    platformRequests: new Counter({
      name: "chatbot_platform_requests_total",
      help: "Sends and edits to the platforms, by outcome (ok, rate_limited, error)",
      labelNames: ["platform", "kind", "outcome"],
      registers,
    }),
    toolCalls: new Counter({
      name: "chatbot_tool_calls_total",
      help: "Tool calls by tool and outcome (ok, error)",
      labelNames: ["tool", "outcome"],
      registers,
    }),
    activeConversations: new Gauge({ name: "chatbot_active_conversations", help: "Conversations being answered by this process", registers }),
  };
}
