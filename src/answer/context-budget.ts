/**
 * The tokens a request has left for the conversation: the context minus the system prompt, the tools and the
 * completion reserve (MODEL_MAX_TOKENS, capped at half the context so a small context still leaves room).
 */
import type { CountOptions, TokenCounter } from "../tokens/token-counter.js";
import type { ContextWindow } from "../tokens/context-window.js";

/** The token budget of requests. */
export interface ContextBudget {
  /** Tokens the summary note, the kept history and the new message may use together. */
  conversationTokens(opts?: CountOptions): Promise<number>;
  /** The context every request must fit. */
  contextTokens(): Promise<number>;
}

/** What a request carries besides the conversation. */
export interface RequestOverhead {
  system: string;
  tools: readonly unknown[];
}

/** A server that did not answer `/props` is asked again after this long (it may have been starting). */
const RETRY_WINDOW_MS = 60_000;
/** Slack for framing the count cannot see (a server's own template differences). */
const MARGIN_TOKENS = 32;

/** Builds the budget; the context size is looked up on first use and kept. */
export function createContextBudget(opts: {
  resolveWindow: () => Promise<ContextWindow>;
  counter: TokenCounter;
  /** The completion reserve (MODEL_MAX_TOKENS). */
  reserveTokens: number;
  /** The system prompt and tool definitions of the coming request. */
  overhead: () => RequestOverhead;
  now?: () => number;
  onWindow?: (window: ContextWindow) => void;
}): ContextBudget {
  const now = opts.now ?? Date.now;
  let window: { value: Promise<ContextWindow>; at: number } | undefined;

  const contextTokens = async (): Promise<number> => {
    if (!window || ((await window.value).source === "default" && now() - window.at > RETRY_WINDOW_MS)) {
      const value = opts.resolveWindow();
      window = { value, at: now() };
      void value.then((w) => opts.onWindow?.(w));
    }
    return (await window.value).tokens;
  };

  return {
    contextTokens,
    async conversationTokens(countOpts = {}) {
      const context = await contextTokens();
      const overhead = opts.overhead();
      const [system, tools] = await Promise.all([
        opts.counter.countMessage({ role: "system", content: overhead.system }, countOpts),
        opts.counter.countTools(overhead.tools, countOpts),
      ]);
      const reserve = Math.min(opts.reserveTokens, Math.floor(context / 2));
      return Math.max(0, context - reserve - system - tools - MARGIN_TOKENS);
    },
  };
}
