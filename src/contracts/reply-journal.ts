/**
 * The ids of the messages one reply has put into the chat, kept with the job
 * (the queue side persists it in Redis). A retried job gets the same journal
 * and edits those messages instead of answering a second time.
 */

/** A reply's message ids, in order, as persisted for the job. */
export interface ReplyJournal {
  /** The ids recorded so far, first message first (empty for a fresh job). */
  messageIds: string[];
  /**
   * Persists the FULL ordered list of this reply's message ids (it replaces the previous list, so calling it
   * again with the same list is harmless). Resolves once it is durable; afterwards `messageIds` equals `ids`.
   */
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
