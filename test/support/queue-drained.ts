/**
 * Waiting on the bot's queues instead of sleeping. A test that must show "nothing else happened"
 * waits until every job the bot was handed has finished (none waiting, delayed, prioritized or
 * active), then asserts on what the user saw: whatever a job would do, it has done by then.
 * Call it only once the job is known to be queued (its reply or typing was seen), since an empty
 * queue before the enqueue is drained too.
 */
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { vi } from "vitest";
import { QUEUE_NAME } from "../../src/redis/keys.js";

/** Where the queues live: a `TestRedis` (a stack's `redis`) or any URL and key prefix. */
export interface QueueLocation {
  url: string;
  prefix: string;
}

export interface DrainOptions {
  /** Queue names (default: the message queue). */
  queues?: readonly string[];
  /** Also wait until no job scheduler (repeating schedule) is left in these queues. */
  schedulers?: boolean;
  timeoutMs?: number;
}

const UNFINISHED = ["wait", "delayed", "prioritized", "active", "waiting-children"] as const;

/** Jobs of the queues that have not finished, by state (and "schedulers" when asked). */
async function unfinished(queues: readonly Queue[], schedulers: boolean): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const queue of queues) {
    for (const [state, n] of Object.entries(await queue.getJobCounts(...UNFINISHED)))
      if (n > 0) counts[`${queue.name} ${state}`] = n;
    if (schedulers) {
      const n = await queue.getJobSchedulersCount();
      if (n > 0) counts[`${queue.name} schedulers`] = n;
    }
  }
  return counts;
}

/** Resolves once every job of the queues has finished; rejects after `timeoutMs` saying what was left. */
export async function waitUntilQueueDrained(where: QueueLocation, opts: DrainOptions = {}): Promise<void> {
  const timeoutMs = opts.timeoutMs ?? 15_000;
  const connection = new Redis(where.url, { maxRetriesPerRequest: null });
  const queues = (opts.queues ?? [QUEUE_NAME]).map((name) => new Queue(name, { connection, prefix: where.prefix }));
  try {
    await vi.waitFor(
      async () => {
        const left = await unfinished(queues, opts.schedulers ?? false);
        if (Object.keys(left).length > 0)
          throw new Error(`queues not drained within ${timeoutMs} ms: ${JSON.stringify(left)}`);
      },
      { timeout: timeoutMs, interval: 50 },
    );
  } finally {
    await Promise.all(queues.map((queue) => queue.close()));
    connection.disconnect();
  }
}
