/**
 * The per-conversation figures of the benchmark, computed only from what the fakes
 * recorded: when the platform delivered the user's message, what the fake model
 * emitted and when (seen by the model tap), and every request the bot made into the
 * chat with the text it carried. Pure functions, so the arithmetic is tested apart
 * from the run.
 */

/** The chats the benchmark talks in; each has its own pacing and targets. */
export type ChatKind = "tg-private" | "tg-group" | "discord";

/** Every chat kind, in table order. */
export const KINDS: readonly ChatKind[] = ["tg-private", "tg-group", "discord"];

/** One request the bot made into a chat, as the platform fake recorded it. */
export interface ChatWrite {
  /** When the fake received (and, for these synchronous methods, applied) it. */
  at: number;
  kind: "typing" | "draft" | "send" | "edit";
  /** The fake accepted it (a refused request changed nothing a user sees). */
  ok: boolean;
  /** Highest answer word index in the text the request carried (0 = none of the answer). */
  shows: number;
  /** The request left the message in its final state (no Stop button any more). */
  final: boolean;
}

/** What the fake model streamed for one conversation, as the tap saw it leave. */
export interface ModelStream {
  /** Streamed deltas of every round (tool-call fragments included). */
  tokens: number;
  /** Emission time of answer word k (1-based) at index k; holes for words not seen. */
  answerAt: number[];
  /** When the finish chunk of the answering round left (`finish_reason: "stop"`). */
  finishAt?: number;
}

/** Everything measured for one conversation. */
export interface ConversationFigures {
  /** Delivery of the user's message → first typing/draft/placeholder request at the fake. */
  firstSignMs?: number;
  /**
   * Delivery of the user's message → the first accepted request that shows a word of the answer: what the user
   * waits for, the bot's own work before and between the model's rounds included (the fake model's pace is fixed).
   */
  firstWordMs?: number;
  /** Per answer word: emitted by the model → first visible on the platform. */
  freshnessMs: number[];
  /** Answer words emitted but never visible in any accepted request. */
  neverShown: number;
  /** Model finished → the request that made the complete answer final. */
  finalMs?: number;
  /** How much of finalMs the chat's pacing imposed (previous request + interval − finish), ≥ 0. */
  dueWaitMs?: number;
  sends: number;
  edits: number;
  drafts: number;
}

/** Inputs of `conversationFigures`. */
export interface ConversationRecord {
  /** When the platform handed the user's message to the adapter (undefined if the fake never did). */
  deliveredAt?: number;
  writes: readonly ChatWrite[];
  stream: ModelStream;
  /** Pacing interval of this chat (the bot's own setting): the least time between two requests. */
  intervalMs: number;
  /** Words in the complete answer. */
  answerWords: number;
}

/** Computes the figures of one conversation. */
export function conversationFigures(rec: ConversationRecord): ConversationFigures {
  const writes = [...rec.writes].sort((a, b) => a.at - b.at);
  const count = (kind: ChatWrite["kind"]) => writes.filter((w) => w.kind === kind).length;

  let firstSignMs: number | undefined;
  if (rec.deliveredAt !== undefined && writes[0]) firstSignMs = Math.max(0, writes[0].at - rec.deliveredAt);

  // Freshness: words in index order, visible requests in time order, a running "shown so far".
  const visible = writes.filter((w) => w.ok && w.kind !== "typing" && w.shows > 0);
  const firstWordMs =
    rec.deliveredAt !== undefined && visible[0] ? Math.max(0, visible[0].at - rec.deliveredAt) : undefined;
  const freshnessMs: number[] = [];
  let neverShown = 0;
  let v = 0;
  let shownSoFar = 0;
  let shownAt = 0;
  for (let k = 1; k < rec.stream.answerAt.length; k++) {
    const emittedAt = rec.stream.answerAt[k];
    if (emittedAt === undefined) continue;
    while (shownSoFar < k && v < visible.length) {
      const w = visible[v++] as ChatWrite;
      if (w.shows > shownSoFar) {
        shownSoFar = w.shows;
        shownAt = w.at;
      }
    }
    if (shownSoFar >= k) freshnessMs.push(Math.max(0, shownAt - emittedAt));
    else neverShown++;
  }

  // The final text: the last accepted request that holds the whole answer in its final state.
  let finalMs: number | undefined;
  let dueWaitMs: number | undefined;
  const finish = rec.stream.finishAt;
  let finalIndex = -1;
  for (let i = writes.length - 1; i >= 0; i--) {
    const w = writes[i] as ChatWrite;
    if (w.ok && w.final && (w.kind === "send" || w.kind === "edit") && w.shows >= rec.answerWords) {
      finalIndex = i;
      break;
    }
  }
  if (finish !== undefined && finalIndex >= 0) {
    const final = writes[finalIndex] as ChatWrite;
    finalMs = Math.max(0, final.at - finish);
    // The message request before it started the interval the final had to respect (typing is not paced,
    // and drafts are paced on a lane of their own: src/app/pacing.ts).
    let previous: ChatWrite | undefined;
    for (let i = finalIndex - 1; i >= 0; i--) {
      const w = writes[i] as ChatWrite;
      if (w.kind !== "typing" && w.kind !== "draft") {
        previous = w;
        break;
      }
    }
    // Bounded by finalMs: the fake notes arrivals, the bot spaces request starts, so the two differ by a request's latency.
    dueWaitMs = previous ? Math.min(finalMs, Math.max(0, previous.at + rec.intervalMs - finish)) : 0;
  }

  return {
    ...(firstSignMs !== undefined ? { firstSignMs } : {}),
    ...(firstWordMs !== undefined ? { firstWordMs } : {}),
    freshnessMs,
    neverShown,
    ...(finalMs !== undefined ? { finalMs } : {}),
    ...(dueWaitMs !== undefined ? { dueWaitMs } : {}),
    sends: count("send"),
    edits: count("edit"),
    drafts: count("draft"),
  };
}

/** The highest answer word index (`w<k>`) in a text, 0 when there is none. */
export function highestWordShown(text: string): number {
  let highest = 0;
  for (const m of text.matchAll(/\bw(\d+)\b/g)) {
    const k = Number(m[1]);
    if (k > highest) highest = k;
  }
  return highest;
}
