/**
 * Proof of life of the attempt answering a job, shared by every worker process
 * (`P:runner:J`, a hash: `id` of the run; `P:runner:J:R`, run R's beat counter).
 *
 * Why BullMQ's lock is not enough: when Redis is away for longer than the lock (or a
 * process stalls), the lock expires while the attempt keeps streaming (the model and
 * the platform do not need Redis). BullMQ then hands the job to another process, whose
 * journal is still empty, and both send a message: the user gets two answers. A run
 * beats every `beatMs` (commands issued while Redis is away are sent when it is back),
 * so a process about to run a job first looks whether someone else's beat still moves;
 * only a run that stopped beating (killed, or finished) is taken over.
 *
 * A process beats all its runs at once: one pipelined INCR per run and beat, with the counter's
 * own key (no check of whose record it is: the key is the run's alone), and its expiry pushed out
 * only about once a minute.
 */
import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import { queueKeys } from "../redis/keys.js";
import { redisScript } from "../redis/script.js";
import { execOrThrow } from "../redis/transaction.js";

// KEYS: runner, the run's beat. ARGV: run id. Deletes the record only if it is still this run's.
const RELEASE = redisScript(`
redis.call('DEL', KEYS[2])
if redis.call('HGET', KEYS[1], 'id') == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`);

/** A claimed job: beating until released. */
export interface RunnerClaim {
  /** Stops beating and removes the record (if no one took it over meanwhile). */
  release(): Promise<void>;
}

/** Liveness of job runs across processes. */
export interface RunnerHeartbeat {
  /** Whether another run of `jobId` is (or was, until a moment ago) alive: its record moved within ~2.5 beats. */
  othersAlive(jobId: string): Promise<boolean>;
  /** Makes this run the job's runner and beats until `release`. */
  claim(jobId: string): Promise<RunnerClaim>;
}

/** Creates the heartbeat over a command connection (one that queues commands while reconnecting). */
export function createRunnerHeartbeat(opts: {
  redis: Redis;
  prefix: string;
  beatMs: number;
  /** Lifetime of a record without beats: longer than any Redis outage worth riding out. Default 1 h. */
  ttlMs?: number;
  onError?: (error: unknown) => void;
}): RunnerHeartbeat {
  const keys = queueKeys(opts.prefix);
  const ttlMs = opts.ttlMs ?? 3_600_000;
  const onError = opts.onError ?? (() => undefined);
  const { redis } = opts;

  /** Runs of this process: their beat keys, and beats since their expiry was last pushed out. */
  const beating = new Map<string, { beats: number }>();
  const refreshEvery = Math.max(1, Math.floor(Math.min(60_000, ttlMs / 4) / opts.beatMs));
  let timer: ReturnType<typeof setInterval> | undefined;
  const beat = () => {
    const pipeline = redis.pipeline();
    for (const [beatKey, run] of beating) {
      pipeline.incr(beatKey);
      if (++run.beats % refreshEvery === 0) pipeline.pexpire(beatKey, ttlMs);
    }
    pipeline.exec().then((results) => {
      const failed = results?.find(([error]) => error);
      if (failed) onError(failed[0]);
    }, onError);
  };

  return {
    async othersAlive(jobId) {
      const key = keys.runner(jobId);
      const id = await redis.hget(key, "id");
      if (id === null) return false;
      // A record is there: a live run elsewhere, or one that died without cleaning up. Watch its beat.
      const before = await redis.get(keys.runnerBeat(jobId, id));
      await new Promise((resolve) => setTimeout(resolve, Math.ceil(opts.beatMs * 2.5)));
      const [idAfter, beatAfter] = await Promise.all([redis.hget(key, "id"), redis.get(keys.runnerBeat(jobId, id))]);
      // Unchanged means dead. Gone means it just finished: the caller looks again later rather than redo it.
      return idAfter !== id || beatAfter !== before;
    },

    async claim(jobId) {
      const key = keys.runner(jobId);
      const runId = randomUUID();
      const beatKey = keys.runnerBeat(jobId, runId);
      await execOrThrow(redis.multi().hset(key, "id", runId).pexpire(key, ttlMs).set(beatKey, "0", "PX", ttlMs));
      beating.set(beatKey, { beats: 0 });
      if (!timer) {
        timer = setInterval(beat, opts.beatMs);
        timer.unref();
      }
      let released = false;
      return {
        async release() {
          if (released) return;
          released = true;
          beating.delete(beatKey);
          if (beating.size === 0 && timer) {
            clearInterval(timer);
            timer = undefined;
          }
          await RELEASE.run(redis, [key, beatKey], [runId]);
        },
      };
    },
  };
}
