/**
 * Reply journals in Redis, by job id: the ids of the messages a reply has sent and whether it is complete.
 * A retried job edits those messages instead of answering twice; a job whose journal is final is only advanced.
 */
import type { Redis } from "ioredis";
import type { ReplyJournal } from "../contracts/reply-journal.js";
import type { RunnerRecord } from "./runner-heartbeat.js";
import { queueKeys } from "../redis/keys.js";
import { redisScript } from "../redis/script.js";

// KEYS: the journal. ARGV: field, value, lifetime (s). One script instead of a MULTI of the two.
const PUT = redisScript(`
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[3])
return 1
`);

/** Journals remembered as freshly expiring (bounded: forgetting one only costs an EXPIRE). */
const MAX_FRESH_JOURNALS = 10_000;

/** Default lifetime of a journal: long enough for every retry of a job. */
export const DEFAULT_JOURNAL_TTL_SECONDS = 24 * 3600;

/** Everything a job's next attempt needs from its journal, read in one command. */
export interface OpenedJournal {
  /** Some attempt completed the reply: the job is only advanced. */
  final: boolean;
  /** Attempts that failed so far (0 for a fresh job). */
  failures: number;
  journal: ReplyJournal;
  /** The runner record kept in the journal's hash (fields `id`, `proc`: runner-heartbeat.ts), if any. */
  runner: RunnerRecord;
}

/** Loads and finalises the reply journals of jobs. */
export interface ReplyJournalStore {
  /** The journal of a job: ids recorded by earlier attempts (empty for a fresh job). */
  load(jobId: string): Promise<ReplyJournal>;
  /** The journal with its final flag and failure count (one HMGET): what a worker reads before an attempt. */
  open(jobId: string): Promise<OpenedJournal>;
  /** Records that attempt `attempt` failed (the next one is attempt + 1). */
  recordFailure(jobId: string, attempt: number): Promise<void>;
  /** Marks the job's reply as complete: retries must not answer again. */
  markFinal(jobId: string): Promise<void>;
  /** Something else (the runner's claim) just gave the job's journal a whole lifetime. */
  lives(jobId: string): void;
  /** Whether the job's reply was completed by some attempt. */
  isFinal(jobId: string): Promise<boolean>;
}

function parseIds(raw: string | null | undefined): string[] {
  if (!raw) return [];
  try {
    const value: unknown = JSON.parse(raw);
    return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
  } catch {
    return [];
  }
}

/** Creates the store: hash `P:journal:<jobId>` with `ids`, `final`, `failures` and the runner record (`id`, `proc`). */
export function createReplyJournalStore(opts: {
  redis: Redis;
  prefix: string;
  ttlSeconds?: number;
}): ReplyJournalStore {
  const keys = queueKeys(opts.prefix);
  const ttl = opts.ttlSeconds ?? DEFAULT_JOURNAL_TTL_SECONDS;
  const { redis } = opts;
  // Journals this process gave their lifetime lately (job id → when): a later field is then a plain HSET.
  const expirySet = new Map<string, number>();
  const markFresh = (jobId: string, at: number) => {
    if (expirySet.size >= MAX_FRESH_JOURNALS) expirySet.clear();
    expirySet.set(jobId, at);
  };
  const put = async (jobId: string, field: string, value: string) => {
    const key = keys.journal(jobId);
    const at = expirySet.get(jobId);
    const now = Date.now();
    if (at !== undefined && now - at < (ttl * 1000) / 2) {
      await redis.hset(key, field, value);
      return;
    }
    await PUT.run(redis, [key], [field, value, ttl]);
    markFresh(jobId, now);
  };

  const journalOf = (jobId: string, rawIds: string | null | undefined): ReplyJournal => {
    const journal = {
      messageIds: parseIds(rawIds),
      async record(ids: string[]): Promise<void> {
        const copy = [...ids];
        await put(jobId, "ids", JSON.stringify(copy));
        journal.messageIds = copy;
      },
    };
    return journal;
  };

  return {
    async load(jobId) {
      return journalOf(jobId, await redis.hget(keys.journal(jobId), "ids"));
    },
    async open(jobId) {
      const [ids, final, failures, id, proc] = await redis.hmget(
        keys.journal(jobId),
        "ids",
        "final",
        "failures",
        "id",
        "proc",
      );
      return {
        final: final === "1",
        failures: Number(failures ?? 0) || 0,
        journal: journalOf(jobId, ids),
        runner: { id: id ?? null, proc: proc ?? null },
      };
    },
    lives: (jobId) => markFresh(jobId, Date.now()),
    recordFailure: (jobId, attempt) => put(jobId, "failures", String(attempt)),
    async markFinal(jobId) {
      await put(jobId, "final", "1");
      expirySet.delete(jobId); // a final journal is never written again
    },
    async isFinal(jobId) {
      return (await redis.hget(keys.journal(jobId), "final")) === "1";
    },
  };
}
