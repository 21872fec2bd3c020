/**
 * Prometheus metrics (prom-client) on a registry of our own, not the global one, so tests and several
 * roles in one process do not collide. docs/operations.md lists the series and the queries worth having.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import { within } from "../shared/deadline.js";

/** States of chatbot_queue_depth: BullMQ's own, plus every accepted message not answered yet (queued behind its conversation too). */
export type QueueDepthState = "waiting" | "active" | "delayed" | "failed" | "unanswered";

/** Reads the queue depth (from Redis); called on every scrape. */
export type QueueDepthReader = () => Promise<Record<QueueDepthState, number>>;

/** Every metric the bot exports. */
export type Metrics = ReturnType<typeof createMetrics>;

/** Creates the metrics on a fresh registry; `defaults` adds process CPU/memory metrics. */
export function createMetrics(opts: { defaults?: boolean } = {}) {
  const registry = new Registry();
  if (opts.defaults) collectDefaultMetrics({ register: registry });
  const registers = [registry];
  let depthSource: { read: QueueDepthReader } | undefined;
  // The read of the scrape in progress: the error counter waits for it (prom-client collects metrics concurrently).
  let depthRead: Promise<void> = Promise.resolve();

  const refreshDepth = async (gauge: Gauge<"state">): Promise<void> => {
    const source = depthSource;
    if (!source) return;
    try {
      const depth = await within(1000, source.read());
      for (const [state, value] of Object.entries(depth)) gauge.set({ state }, value);
    } catch {
      // A scrape must still answer when Redis does not: drop the stale figures and count the miss.
      gauge.reset();
      queueDepthReadErrors.inc();
    }
  };
  const queueDepth = new Gauge({
    name: "chatbot_queue_depth",
    help: "Jobs in the queue by state (BullMQ's), and 'unanswered': every accepted message not yet answered",
    labelNames: ["state"],
    registers,
    collect() {
      depthRead = refreshDepth(this);
      return depthRead;
    },
  });
  // Registered after the gauge, whose collect starts first: this one waits for that read.
  const queueDepthReadErrors = new Counter({
    name: "chatbot_queue_depth_read_errors_total",
    help: "Scrapes whose queue depth could not be read from Redis (the depth series are then absent)",
    registers,
    collect: () => depthRead,
  });

  return {
    registry,
    messagesIn: new Counter({
      name: "chatbot_messages_in_total",
      help: "Messages offered by the adapters, by outcome (queued, duplicate, refused, rate_limited)",
      labelNames: ["platform", "outcome"],
      registers,
    }),
    jobs: new Counter({
      name: "chatbot_jobs_total",
      help: "Job attempts by outcome: done, cancelled (/stop), retried, failed (given up), interrupted (shutdown, handed back)",
      labelNames: ["outcome"],
      registers,
    }),
    queueDepth,
    queueDepthReadErrors,
    firstVisibleSeconds: new Histogram({
      name: "chatbot_first_visible_seconds",
      help: "From the message's arrival to the first thing the user sees",
      labelNames: ["platform"],
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    }),
    modelFirstTokenSeconds: new Histogram({
      name: "chatbot_model_first_token_seconds",
      help: "Model request to its first streamed token, per round",
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30],
      registers,
    }),
    modelTokensPerSecond: new Histogram({
      name: "chatbot_model_tokens_per_second",
      help: "Completion tokens per second of generation (first token to end of round), per round",
      buckets: [1, 5, 10, 20, 40, 80, 160],
      registers,
    }),
    platformRequests: new Counter({
      name: "chatbot_platform_requests_total",
      help: "Requests of the bot (reply engine and adapters) to the platforms by kind (send, edit, draft, typing) and outcome (ok, rate_limited = HTTP 429, error, aborted)",
      labelNames: ["platform", "kind", "outcome"],
      registers,
    }),
    toolCalls: new Counter({
      name: "chatbot_tool_calls_total",
      help: "Tool calls by tool and outcome (ok, error)",
      labelNames: ["tool", "outcome"],
      registers,
    }),
    activeConversations: new Gauge({
      name: "chatbot_active_conversations",
      help: "Conversations being answered by this process",
      registers,
    }),
    modelRequestTokens: new Histogram({
      name: "chatbot_model_request_tokens",
      help: "Tokens per model request by kind (prompt, completion), as the server reported them",
      labelNames: ["kind"],
      buckets: [64, 256, 1024, 2048, 4096, 8192, 16384, 32768],
      registers,
    }),
    /** Prompt tokens by what the server did with them: `processed` (read) or `reused` (its prompt cache). */
    modelPromptTokens: new Counter({
      name: "chatbot_model_prompt_tokens_total",
      help: "Prompt tokens the model server read (processed) or took from its prompt cache (reused), as it reported them",
      labelNames: ["kind"],
      registers,
    }),
    summaries: new Counter({
      name: "chatbot_summaries_total",
      help: "Conversation summaries by outcome: made (old turns folded in), failed (the turns stay until the next try)",
      labelNames: ["outcome"],
      registers,
    }),
    /** Makes every scrape read chatbot_queue_depth from `read` (the worker role calls it); returns the undo. */
    readQueueDepthFrom(read: QueueDepthReader): () => void {
      const source = { read };
      depthSource = source;
      return () => {
        if (depthSource === source) depthSource = undefined;
      };
    },
  };
}
