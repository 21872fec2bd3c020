/** `--trace`: every conversation's raw timeline, for digging into a figure. */
import type { BenchConversation, ChatPlatforms } from "./chat-platforms.js";
import type { ChatWrite } from "./conversation-figures.js";
import type { ModelTap } from "./model-tap.js";
import type { JobOutcomeLine, WaveTotals } from "./wave.js";

/** One conversation's raw timeline, for --trace. */
export interface TraceEntry {
  level: number;
  conversation: BenchConversation;
  deliveredAt?: number;
  outcome?: JobOutcomeLine;
  model?: { tokens: number; firstWordAt?: number; lastWordAt?: number; finishAt?: number };
  writes: ChatWrite[];
}

/** The timelines of a level's conversations: delivery, the model's words, the bot's requests, the worker's outcome. */
export function traceOf(
  level: number,
  conversations: readonly BenchConversation[],
  waves: readonly WaveTotals[],
  platforms: ChatPlatforms,
  tap: ModelTap,
): TraceEntry[] {
  const records = platforms.records(conversations);
  const outcomes = new Map(waves.flatMap((w) => [...w.outcomes.entries()]));
  return conversations.map((conversation) => {
    const record = records.get(conversation.chatId);
    const stream = tap.streams.get(conversation.id);
    const words = stream?.answerAt.filter((at): at is number => at !== undefined) ?? [];
    const outcome = outcomes.get(conversation.conversationKey);
    return {
      level,
      conversation,
      ...(record?.deliveredAt !== undefined ? { deliveredAt: record.deliveredAt } : {}),
      ...(outcome ? { outcome } : {}),
      ...(stream
        ? {
            model: {
              tokens: stream.tokens,
              ...(words.length ? { firstWordAt: words[0], lastWordAt: words[words.length - 1] } : {}),
              ...(stream.finishAt !== undefined ? { finishAt: stream.finishAt } : {}),
            },
          }
        : {}),
      writes: record?.writes ?? [],
    };
  });
}
