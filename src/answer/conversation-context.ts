/**
 * What one request carries of the conversation: the summary note, the newest stored turns that fit the budget (by
 * the counts stored with them, so only the new message is counted on the reply's way) and the new message.
 */
import type { ChatMessage } from "../contracts/chat-message.js";
import type { InboundMessage } from "../contracts/inbound-message.js";
import { fitHistory, type CountedMessage } from "../history/fit-history.js";
import type { StoredHistory } from "../history/history-store.js";
import type { SummaryStore } from "../history/summary-store.js";
import type { TokenCounter } from "../tokens/token-counter.js";
import type { ContextBudget } from "./context-budget.js";
import { summaryNote } from "./summary-note.js";
import type { PreparedTurn } from "./prepared-turn.js";
import { toUserMessage } from "./user-message.js";

/** The conversation as one request will carry it. */
export interface PreparedConversation {
  /** The new message as it goes into history. */
  user: ChatMessage;
  /** Summary note, kept history and the new message, oldest first. */
  messages: ChatMessage[];
  /** Tokens of the conversation's summary the request carries (0: it has none). */
  summaryTokens: number;
  /** The same conversation cut harder, after a context-size refusal (undefined: nothing left to cut). */
  shrink: (refusal: { excessTokens?: number }) => Promise<ChatMessage[] | undefined>;
}

/** The conversation side of answering: preparing the request, counting a turn before it is stored. */
export interface ConversationContext {
  /** `turn` (the message with its attachments prepared) gives the new message's two forms; without it, its text alone. */
  prepare(
    message: InboundMessage,
    signal?: AbortSignal,
    turn?: Pick<PreparedTurn, "withQuote">,
  ): Promise<PreparedConversation>;
  /** Token counts of a turn's messages, in order (stored with them). */
  countTurn(messages: readonly ChatMessage[], signal?: AbortSignal): Promise<number[]>;
}

/** Extra tokens a retry cuts beyond the excess a server named (its count and ours differ a little). */
const SHRINK_SLACK_TOKENS = 64;

/** Text reduced to letters and digits, so a platform's rendering of a message matches what the model wrote. */
function comparable(text: string): string {
  return text.replace(/[^\p{L}\p{N}]+/gu, "").toLowerCase();
}

/** Whether a quoted message is among the stored messages (then a short quote says which one is meant). */
function isRemembered(quoted: string, stored: readonly CountedMessage[]): boolean {
  const needle = comparable(quoted).slice(0, 80);
  if (needle.length < 8) return false;
  return stored.some(({ message: m }) => m.role !== "tool" && comparable(m.content).includes(needle));
}

/** Builds the conversation context over the stores, the counter and the budget. */
export function createConversationContext(deps: {
  history: StoredHistory;
  summaries: SummaryStore;
  counter: TokenCounter;
  budget: ContextBudget;
}): ConversationContext {
  return {
    async prepare(message, signal, turn) {
      const [stored, summary, budget] = await Promise.all([
        deps.history.loadStored(message.conversationKey),
        deps.summaries.read(message.conversationKey),
        deps.budget.conversationTokens({ hurried: true, ...(signal ? { signal } : {}) }),
      ]);
      const quoted = message.replyTo?.text?.trim();
      // A reply quotes what it answers, at more length when the stored history lacks it.
      const remembered = quoted === undefined || isRemembered(quoted, stored);
      const forms = turn ? turn.withQuote(remembered) : undefined;
      const user = forms?.stored ?? toUserMessage(message, { remembered });
      const request = forms?.request ?? user;
      const note = summary ? summaryNote(summary.text) : undefined;
      // On the reply's way: a tokenizer still loading is not waited for (the turn is counted exactly once answered).
      const userTokens = await deps.counter.countMessage(user, { hurried: true, ...(signal ? { signal } : {}) });
      const room = budget - userTokens - (summary?.tokens ?? 0);
      const fitted = fitHistory(stored, room);
      const assemble = (kept: readonly CountedMessage[], withNote: boolean): ChatMessage[] => [
        ...(note && withNote ? [note] : []),
        ...kept.map((m) => m.message),
        request,
      ];
      return {
        user,
        messages: assemble(fitted.kept, true),
        summaryTokens: summary?.tokens ?? 0,
        async shrink(refusal) {
          // Half the kept history, or the excess the server named if more; when that cuts nothing, the summary note.
          const half = Math.floor(fitted.keptTokens / 2);
          const target =
            refusal.excessTokens === undefined
              ? half
              : Math.min(half, fitted.keptTokens - refusal.excessTokens - SHRINK_SLACK_TOKENS);
          const harder = fitHistory(fitted.kept, Math.max(0, target));
          if (harder.kept.length < fitted.kept.length) return assemble(harder.kept, true);
          return note ? assemble(fitted.kept, false) : undefined;
        },
      };
    },

    countTurn(messages, signal) {
      return Promise.all(messages.map((m) => deps.counter.countMessage(m, signal ? { signal } : {})));
    },
  };
}
