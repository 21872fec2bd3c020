/**
 * Folds old turns into the conversation's running summary, after an answer is delivered or on `/compact`. Past three
 * quarters of what a request can carry (tokens or HISTORY_MAX_MESSAGES) the oldest turns are folded until half
 * remains; `/compact` folds all before the newest exchange. A failed summary changes nothing.
 */
import type { Summarizer } from "../agent/conversation-summarizer.js";
import type { RequestPrefix } from "../contracts/agent-events.js";
import type { HistorySize, StoredHistory, StoredMessage } from "../history/history-store.js";
import { fitHistory } from "../history/fit-history.js";
import type { SummaryStore } from "../history/summary-store.js";
import type { Logger } from "../observability/logger.js";
import type { Metrics } from "../observability/metrics.js";
import type { TokenCounter } from "../tokens/token-counter.js";
import type { ContextBudget } from "./context-budget.js";
import { summaryNote } from "./summary-note.js";

/** What a fold did. */
export type CompactOutcome =
  | { status: "folded"; folded: number; keptMessages: number; keptTokens: number; summaryTokens: number }
  | { status: "nothing"; keptMessages: number; keptTokens: number }
  | { status: "failed"; reason: string };

/** Folds old turns of conversations into their summaries. */
export interface ConversationCompactor {
  /** After an answer, folds past the threshold; `stored` (the size the append told) spares reading it. Never throws. */
  afterAnswer(
    conversationKey: string,
    opts: {
      shared: boolean;
      signal?: AbortSignal;
      stored?: HistorySize;
      summaryTokens?: number;
      /** The answer's system prompt and tools: the summary request then starts as the answer's requests did. */
      prefix?: RequestPrefix;
    },
  ): Promise<CompactOutcome>;
  /** `/compact`: folds everything before the newest exchange now. Never throws. */
  compactNow(conversationKey: string, opts: { shared: boolean; signal?: AbortSignal }): Promise<CompactOutcome>;
}

/** Twice the summarizer's default completion budget (400 tokens). */
const DEFAULT_MAX_SUMMARY_TOKENS = 800;
/** Generous: English runs about four characters a token. */
const MAX_CHARS_PER_TOKEN = 8;

/** A summary longer than the cap: not stored, the turns stay until the next try. */
class OversizedSummaryError extends Error {
  override readonly name = "OversizedSummaryError";
  constructor(size: number, unit: "tokens" | "characters") {
    super(`the model wrote a summary of ${size} ${unit}, over the cap; it is not stored`);
  }
}

const sum = (messages: readonly StoredMessage[]): number => messages.reduce((n, m) => n + m.tokens, 0);

/** Index of the newest user message (where the newest exchange starts); 0 when there is none. */
function newestExchange(stored: readonly StoredMessage[]): number {
  for (let i = stored.length - 1; i >= 0; i--) if ((stored[i] as StoredMessage).message.role === "user") return i;
  return 0;
}

/** Builds the compactor. */
export function createConversationCompactor(deps: {
  history: StoredHistory;
  summaries: SummaryStore;
  summarize: Summarizer;
  counter: TokenCounter;
  budget: ContextBudget;
  /** HISTORY_MAX_MESSAGES: the store forgets past it, so folding starts well before. */
  maxMessages: number;
  /** HISTORY_MAX_TOKENS: the same, in tokens. */
  maxTokens: number;
  /** The largest summary stored, in tokens: one from a server that ignores `max_tokens` would break every request. */
  maxSummaryTokens?: number;
  logger: Logger;
  metrics?: Metrics;
  now?: () => number;
}): ConversationCompactor {
  const now = deps.now ?? Date.now;
  const maxSummaryTokens = deps.maxSummaryTokens ?? DEFAULT_MAX_SUMMARY_TOKENS;

  /** Summarises `stored[0..keepFrom)` into the summary and removes those messages. */
  const fold = async (
    key: string,
    stored: StoredMessage[],
    keepFrom: number,
    shared: boolean,
    signal?: AbortSignal,
    prefix?: RequestPrefix,
  ): Promise<CompactOutcome> => {
    const kept = stored.slice(keepFrom);
    if (keepFrom <= 0) return { status: "nothing", keptMessages: kept.length, keptTokens: sum(kept) };
    const folded = stored.slice(0, keepFrom);
    const startedAt = now();
    try {
      const previous = await deps.summaries.read(key);
      const text = await deps.summarize({
        ...(previous ? { previous: previous.text } : {}),
        messages: folded.map((m) => m.message),
        // The conversation as the answer's last request carried it (the note, every stored turn), then the instruction.
        ...(prefix
          ? {
              conversation: {
                prefix,
                messages: [...(previous ? [summaryNote(previous.text)] : []), ...stored.map((m) => m.message)],
              },
            }
          : {}),
        shared,
        ...(signal ? { signal } : {}),
      });
      // Far more characters than the cap could hold is refused before it is sent to a tokenizer at all.
      if (text.length > maxSummaryTokens * MAX_CHARS_PER_TOKEN)
        throw new OversizedSummaryError(text.length, "characters");
      const tokens = await deps.counter.countMessage(summaryNote(text), signal ? { signal } : {});
      if (tokens > maxSummaryTokens) throw new OversizedSummaryError(tokens, "tokens");
      const last = folded.at(-1) as StoredMessage;
      const applied = await deps.summaries.fold(key, {
        count: kept[0]?.at ?? last.at + 1,
        check: { at: last.at, element: last.element },
        tokens: sum(folded),
        summary: { text, tokens, messages: (previous?.messages ?? 0) + folded.length, updatedAt: now() },
        startedAt,
      });
      if (!applied) return { status: "failed", reason: "the conversation changed while it was being summarised" };
      deps.metrics?.summaries.inc({ outcome: "made" });
      return {
        status: "folded",
        folded: folded.length,
        keptMessages: kept.length,
        keptTokens: sum(kept),
        summaryTokens: tokens,
      };
    } catch (error) {
      deps.metrics?.summaries.inc({ outcome: "failed" });
      deps.logger.warn({ err: error, conversation: key }, "summary failed; the turns stay until the next try");
      return { status: "failed", reason: error instanceof Error ? error.message : String(error) };
    }
  };

  return {
    async afterAnswer(key, opts) {
      try {
        const known = opts.stored;
        // The summary's size as the answer began stands: one written meanwhile is rare, and the next check sees it.
        const [summaryTokens, room] = await Promise.all([
          opts.summaryTokens ?? deps.summaries.read(key).then((summary) => summary?.tokens ?? 0),
          deps.budget.conversationTokens(opts.signal ? { signal: opts.signal } : {}),
        ]);
        const tokenLimit = Math.min(room - summaryTokens, deps.maxTokens);
        const small = (tokens: number, messages: number) =>
          tokens <= tokenLimit * 0.75 && messages <= deps.maxMessages * 0.75;
        // The store's own total and count: the history read below can only be smaller.
        if (known && small(known.tokens, known.messages))
          return { status: "nothing", keptMessages: known.messages, keptTokens: known.tokens };
        const stored = await deps.history.loadStored(key);
        const tokens = sum(stored);
        if (small(tokens, stored.length)) {
          return { status: "nothing", keptMessages: stored.length, keptTokens: tokens };
        }
        // Keep the newest half (by tokens and by count), cut where history may start.
        const byTokens = fitHistory(stored, Math.floor(tokenLimit / 2));
        const keepFrom = Math.max(
          stored.length - byTokens.kept.length,
          stored.length - Math.floor(deps.maxMessages / 2),
        );
        const start = stored.findIndex((m, i) => i >= keepFrom && m.message.role === "user");
        // Over the conversation's own (cached) prefix only when it fits a request; else the transcript, which fits.
        const prefix = opts.prefix && tokens + summaryTokens <= room ? opts.prefix : undefined;
        return await fold(key, stored, start < 0 ? newestExchange(stored) : start, opts.shared, opts.signal, prefix);
      } catch (error) {
        deps.logger.warn({ err: error, conversation: key }, "could not check whether the conversation needs a summary");
        return { status: "failed", reason: error instanceof Error ? error.message : String(error) };
      }
    },

    async compactNow(key, opts) {
      try {
        const stored = await deps.history.loadStored(key);
        return await fold(key, stored, newestExchange(stored), opts.shared, opts.signal);
      } catch (error) {
        deps.logger.warn({ err: error, conversation: key }, "/compact failed");
        return { status: "failed", reason: error instanceof Error ? error.message : String(error) };
      }
    },
  };
}

/** What `/compact` answers, on every platform. */
export function compactReplyText(outcome: CompactOutcome): string {
  switch (outcome.status) {
    case "folded":
      return `🗜️ Done: ${outcome.folded} earlier messages are now a short summary (${outcome.summaryTokens} tokens); I kept the last ${outcome.keptMessages} as they are (${outcome.keptTokens} tokens).`;
    case "nothing":
      return outcome.keptMessages === 0
        ? "Nothing to compact: this conversation is empty."
        : `Nothing to compact yet: I keep the last ${outcome.keptMessages} messages as they are (${outcome.keptTokens} tokens).`;
    case "failed":
      return "Sorry, I could not summarise this conversation just now; nothing was forgotten. Please try again later.";
  }
}
