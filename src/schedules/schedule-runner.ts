/**
 * Runs schedules' jobs: posts the text or asks for the prompt's answer, ends a schedule after its last run, pauses
 * one that failed three times in a row; a run missed while workers were down fires with a note, or is skipped
 * when over an hour late.
 */
import { type Job, Worker } from "bullmq";
import type { Redis } from "ioredis";
import { SCHEDULE_QUEUE_NAME, scheduleFiredKey } from "../redis/keys.js";
import {
  short,
  type ScheduleBook,
  type ScheduleChat,
  type ScheduleJobData,
  type ScheduleRecord,
} from "./schedule-book.js";
import { describeInstant } from "./schedule-when.js";

/** How a run reaches the chat (the composition root wires the platforms and the message queue). */
export interface ScheduleDelivery {
  /** Posts `text` as a new message in the chat. */
  post(chat: ScheduleChat, text: string): Promise<void>;
  /** Queues `record.text` as a message of the conversation, answered like any other; `runId` makes it unique. */
  ask(record: ScheduleRecord, runId: string, note?: string): Promise<void>;
}

/** Options of the runner. */
export interface ScheduleRunnerOptions {
  connection: () => Redis;
  /** For the fired markers (any connection of the caller). */
  redis: Redis;
  prefix: string;
  book: ScheduleBook;
  delivery: ScheduleDelivery;
  maxRuns: number;
  concurrency?: number;
  now?: () => Date;
  lockDurationMs?: number;
  stalledIntervalMs?: number;
  log?: { warn(obj: object, msg: string): void };
}

/** A running schedule worker. */
export interface ScheduleRunner {
  ready(): Promise<void>;
  close(force?: boolean): Promise<void>;
}

const LATE_NOTE_MS = 60_000;
const SKIP_AFTER_MS = 3_600_000;
const PAUSE_AFTER_FAILURES = 3;

/** Starts a BullMQ worker on the schedule queue. */
export function startScheduleRunner(opts: ScheduleRunnerOptions): ScheduleRunner {
  const now = opts.now ?? (() => new Date());
  const worker = new Worker<ScheduleJobData>(SCHEDULE_QUEUE_NAME, (job) => run(job), {
    connection: opts.connection(),
    prefix: opts.prefix,
    concurrency: opts.concurrency ?? 4,
    ...(opts.lockDurationMs ? { lockDuration: opts.lockDurationMs } : {}),
    ...(opts.stalledIntervalMs ? { stalledInterval: opts.stalledIntervalMs } : {}),
  });
  worker.on("error", (err) => opts.log?.warn({ err }, "schedule worker error"));

  async function run(job: Job<ScheduleJobData>): Promise<void> {
    const record = await opts.book.get(job.data.conversationKey, job.data.id);
    if (!record || record.paused) return; // cancelled (or paused) since it was queued
    const runId = job.id ?? `${record.id}-${job.timestamp}`;
    // A job taken over from a worker that died after delivering must not post a second time.
    const first = await opts.redis.set(scheduleFiredKey(opts.prefix, runId), "1", "EX", 86_400, "NX");
    if (first !== "OK") return;
    const due = job.opts.prevMillis ?? record.at ?? job.timestamp;
    const late = now().getTime() - due;
    const dueWords = describeInstant(new Date(due), record.timeZone);
    const done = async (updated: ScheduleRecord) => {
      if (!updated.repeat || updated.runs >= opts.maxRuns)
        await opts.book.cancel(updated.chat.conversationKey, updated.id);
      else await opts.book.update(updated);
    };
    if (late > SKIP_AFTER_MS) {
      await opts.delivery
        .post(record.chat, `⏰ Skipped “${short(record.text)}”, due ${dueWords}: the bot was down at that time.`)
        .catch((err: unknown) => opts.log?.warn({ err }, "could not post a skipped schedule's note"));
      await done({ ...record, runs: record.runs + 1 });
      return;
    }
    const note = late > LATE_NOTE_MS ? `(late: due ${dueWords}, the bot was down)` : undefined;
    try {
      if (record.kind === "text") await opts.delivery.post(record.chat, `⏰ ${record.text}${note ? `\n${note}` : ""}`);
      else await opts.delivery.ask(record, runId, note);
    } catch (err) {
      const failures = record.failures + 1;
      opts.log?.warn({ err, schedule: record.id, failures }, "a schedule run failed");
      if (failures >= PAUSE_AFTER_FAILURES || !record.repeat) {
        await opts.book.pause({ ...record, failures });
        await opts.delivery
          .post(
            record.chat,
            record.repeat
              ? `⚠️ Schedule ${record.id} (“${short(record.text)}”) failed ${failures} times in a row and is paused; /schedules to cancel it.`
              : `⚠️ Schedule ${record.id} (“${short(record.text)}”) could not be delivered.`,
          )
          .catch(() => undefined);
        return;
      }
      await opts.book.update({ ...record, failures });
      return;
    }
    const runs = record.runs + 1;
    await done({ ...record, runs, failures: 0 });
    if (record.repeat && runs >= opts.maxRuns)
      await opts.delivery
        .post(
          record.chat,
          `Schedule ${record.id} (“${short(record.text)}”) ran ${runs} times, its most, and has ended.`,
        )
        .catch(() => undefined);
  }

  return {
    ready: () => worker.waitUntilReady().then(() => undefined),
    close: (force) => worker.close(force),
  };
}
