/** A reply's message ids, in order, kept with the job: a retry edits those messages instead of answering twice. */
export interface ReplyJournal {
  /** The ids recorded so far, first message first (empty for a fresh job). */
  messageIds: string[];
  /** Persists the FULL ordered list (replacing the previous one); resolves once durable. */
  record(ids: string[]): Promise<void>;
}

/** A journal kept in memory (terminal chat, tests, and callers that persist nothing). */
export function createMemoryReplyJournal(initial: readonly string[] = []): ReplyJournal {
  const journal = {
    messageIds: [...initial],
    async record(ids: string[]): Promise<void> {
      journal.messageIds = [...ids];
    },
  };
  return journal;
}
