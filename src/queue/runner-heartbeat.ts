/**
 * Proof of life of the attempt answering a job, shared by every worker process: the job's record (`id` of the
 * run, `proc` its process's beat key) and each process's beat counter `P:beat:PROC`.
 *
 * Why BullMQ's lock is not enough: when Redis is away longer than the lock, the lock expires while the attempt
 * keeps streaming, BullMQ hands the job to another process with an empty journal, and the user gets two answers.
 * So a process with runs beats (one INCR per `beatMs`, from a timer, whatever its number of runs), and a process
 * about to run a job first checks whether the beat named in its record still moves; only a run whose process
 * stopped beating (killed) or that finished (record gone) is taken over.
 */
import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import { queueKeys } from "../redis/keys.js";
import { redisScript } from "../redis/script.js";

// KEYS: runner, the process's beat. ARGV: run id, the record's lifetime (ms), '1' when the process starts
// beating, the beat's lifetime (ms).
const CLAIM = redisScript(`
redis.call('HSET', KEYS[1], 'id', ARGV[1], 'proc', KEYS[2])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
if ARGV[3] == '1' then redis.call('SET', KEYS[2], '0', 'PX', ARGV[4]) end
return 1
`);

// KEYS: runner. ARGV: run id, '1' when the record shares its hash (blank its id, keep the hash).
// Removes the record only if it is still this run's.
const RELEASE = redisScript(`
if redis.call('HGET', KEYS[1], 'id') ~= ARGV[1] then return 0 end
if ARGV[2] == '1' then return redis.call('HSET', KEYS[1], 'id', '') end
return redis.call('DEL', KEYS[1])
`);

/** A runner record as read (by the caller, e.g. with the job's journal): `id` of the run and `proc`, its beat. */
export interface RunnerRecord {
  id: string | null | undefined;
  proc: string | null | undefined;
}

/** A claimed job: beating until released. */
export interface RunnerClaim {
  /** Stops beating and removes the record (if no one took it over meanwhile). */
  release(): Promise<void>;
}

/** Liveness of job runs across processes. */
export interface RunnerHeartbeat {
  /** Whether another run of `jobId` is (or was a moment ago) alive: its beat moved within ~2.5 beats. */
  othersAlive(jobId: string, record?: RunnerRecord): Promise<boolean>;
  /** Makes this run the job's runner and beats until `release`. */
  claim(jobId: string): Promise<RunnerClaim>;
}

/** Creates the heartbeat over a command connection (one that queues commands while reconnecting). */
export function createRunnerHeartbeat(opts: {
  redis: Redis;
  prefix: string;
  beatMs: number;
  /** Keep records in a hash shared with other fields (the journal): a claim gives it `ttlMs`, a release blanks `id`. */
  sharedRecord?: { key(jobId: string): string; ttlMs: number };
  onError?: (error: unknown) => void;
}): RunnerHeartbeat {
  const keys = queueKeys(opts.prefix);
  const recordKey = opts.sharedRecord?.key ?? keys.runner;
  const shared = opts.sharedRecord ? "1" : "0";
  // Lifetime of a record without beats: longer than any Redis outage worth riding out.
  const ttlMs = 3_600_000;
  const recordTtlMs = opts.sharedRecord?.ttlMs ?? ttlMs;
  const onError = opts.onError ?? (() => undefined);
  const { redis } = opts;

  const beatKey = keys.processBeat(randomUUID());
  const running = new Set<string>();
  const refreshEvery = Math.max(1, Math.floor(Math.min(60_000, ttlMs / 4) / opts.beatMs));
  let beats = 0;
  let timer: ReturnType<typeof setInterval> | undefined;
  const beat = () => {
    const pipeline = redis.pipeline().incr(beatKey);
    if (++beats % refreshEvery === 0) pipeline.pexpire(beatKey, ttlMs);
    pipeline.exec().then((results) => {
      const failed = results?.find(([error]) => error);
      if (failed) onError(failed[0]);
    }, onError);
  };

  return {
    async othersAlive(jobId, record) {
      const key = recordKey(jobId);
      const { id, proc }: RunnerRecord =
        record ?? (await redis.hmget(key, "id", "proc").then(([id, proc]) => ({ id, proc })));
      if (!id) return false;
      // A record without `proc` is from a process of the version before, which beat each run on its own key.
      const beat = proc || `${key}:${id}`;
      // A record is there: a live run elsewhere, or one whose process died without cleaning up. Watch its beat.
      const before = await redis.get(beat);
      await new Promise((resolve) => setTimeout(resolve, Math.ceil(opts.beatMs * 2.5)));
      const [[idAfter], beatAfter] = await Promise.all([redis.hmget(key, "id"), redis.get(beat)]);
      // Unchanged means dead. Gone means it just finished: the caller looks again later rather than redo it.
      return idAfter !== id || beatAfter !== before;
    },

    async claim(jobId) {
      const key = recordKey(jobId);
      const runId = randomUUID();
      // A process that starts beating (again) starts its counter afresh: a change is all a watcher looks for.
      await CLAIM.run(redis, [key, beatKey], [runId, recordTtlMs, timer ? "0" : "1", ttlMs]);
      running.add(runId);
      if (!timer) {
        timer = setInterval(beat, opts.beatMs);
        timer.unref();
      }
      let released = false;
      return {
        async release() {
          if (released) return;
          released = true;
          running.delete(runId);
          if (running.size === 0 && timer) {
            clearInterval(timer);
            timer = undefined;
          }
          await RELEASE.run(redis, [key], [runId, shared]);
        },
      };
    },
  };
}
