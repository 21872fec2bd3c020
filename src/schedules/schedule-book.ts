/**
 * The schedules of every chat: a record per schedule in Redis (one hash per chat), delivered by BullMQ (a delayed
 * job, or a job scheduler for a repeating one), so it survives restarts and fires once with any number of workers.
 */
import { Queue } from "bullmq";
import type { Redis } from "ioredis";
import { z } from "zod";
import { platformSchema } from "../contracts/inbound-message.js";
import { SCHEDULE_QUEUE_NAME, schedulesKey } from "../redis/keys.js";
import { describeInstant, parseWhen } from "./schedule-when.js";

/** The chat a schedule posts into (what a reply port and a queued message need). */
export const scheduleChatSchema = z.object({
  platform: platformSchema,
  conversationKey: z.string().min(1).max(200),
  chatId: z.string().min(1).max(100),
  threadId: z.string().max(100).optional(),
  chatType: z.enum(["private", "group", "channel"]),
  guildId: z.string().max(100).optional(),
});
export type ScheduleChat = z.infer<typeof scheduleChatSchema>;

/** One stored schedule. */
export const scheduleRecordSchema = z.object({
  id: z.string(),
  chat: scheduleChatSchema,
  author: z.object({ id: z.string(), displayName: z.string() }),
  kind: z.enum(["text", "prompt"]),
  text: z.string(),
  /** "once" or the rule's words ("every weekday at 08:00"). */
  rule: z.string(),
  repeat: z.boolean(),
  timeZone: z.string(),
  createdAt: z.number(),
  /** For a once schedule, when it fires. */
  at: z.number().optional(),
  runs: z.number().default(0),
  failures: z.number().default(0),
  paused: z.boolean().optional(),
});
export type ScheduleRecord = z.infer<typeof scheduleRecordSchema>;

/** Who creates a schedule and where. */
export interface ScheduleAsker {
  chat: ScheduleChat;
  author: { id: string; displayName: string };
  /** The chat's zone (its /timezone, else the server's). */
  timeZone: string;
  /** Whether the asker may make repeating schedules here (private chat, chat admin, bot admin). */
  mayRepeat(): Promise<boolean>;
}

/** A new schedule as asked for. */
export interface ScheduleRequest {
  when: string;
  text: string;
  kind: "text" | "prompt";
}

/** Created (with the words to confirm it), or refused with one line. */
export type ScheduleResult =
  | { ok: true; schedule: ScheduleRecord; next: Date; confirmation: string }
  | { ok: false; problem: string };

/** What the book needs. */
export interface ScheduleBookOptions {
  redis: Redis;
  prefix: string;
  maxPerChat: number;
  maxRuns: number;
  now?: () => Date;
  /** Milliseconds per minute of "every N minutes" (default 60 000); tests shorten it. */
  msPerMinute?: number;
}

/** The schedules of every chat. */
export interface ScheduleBook {
  create(asker: ScheduleAsker, request: ScheduleRequest): Promise<ScheduleResult>;
  list(conversationKey: string): Promise<ScheduleRecord[]>;
  get(conversationKey: string, id: string): Promise<ScheduleRecord | undefined>;
  /** Removes a schedule and its pending runs; false when there was none with that id. */
  cancel(conversationKey: string, id: string): Promise<boolean>;
  /** Stops a schedule's runs but keeps it listed, marked paused (after repeated failures). */
  pause(record: ScheduleRecord): Promise<void>;
  /** Stores a record changed by a run (runs, failures, paused). */
  update(record: ScheduleRecord): Promise<void>;
  /** The next time a schedule fires, if it still will. */
  next(record: ScheduleRecord): Promise<Date | undefined>;
  close(): Promise<void>;
}

/** BullMQ's id of a schedule's job or job scheduler (no ':' allowed in custom ids). */
export function scheduleJobId(record: Pick<ScheduleRecord, "id">): string {
  return `sched-${record.id}`;
}

/** Data of a schedule's job. */
export interface ScheduleJobData {
  conversationKey: string;
  id: string;
}

const MAX_TEXT = 1000;

/** KEYS[1] the chat's schedule hash; ARGV[1] the schedule id, ARGV[2] its record: written only if the id is there. */
const UPDATE_IF_PRESENT = `if redis.call("HEXISTS", KEYS[1], ARGV[1]) == 1 then return redis.call("HSET", KEYS[1], ARGV[1], ARGV[2]) end return 0`;

/** Creates the book over a caller-owned connection. */
export function createScheduleBook(opts: ScheduleBookOptions): ScheduleBook {
  const queue = new Queue<ScheduleJobData>(SCHEDULE_QUEUE_NAME, { connection: opts.redis, prefix: opts.prefix });
  queue.on("error", () => undefined);
  const now = opts.now ?? (() => new Date());
  const msPerMinute = opts.msPerMinute ?? 60_000;
  const key = (conversationKey: string) => schedulesKey(opts.prefix, conversationKey);

  const parse = (json: string) => scheduleRecordSchema.safeParse(JSON.parse(json)).data;
  const list = async (conversationKey: string): Promise<ScheduleRecord[]> => {
    const records = (await opts.redis.hvals(key(conversationKey))).map(parse);
    return records.filter((r) => r !== undefined).sort((a, b) => a.createdAt - b.createdAt);
  };
  // Both kinds are removed: a record may be gone while its job is not (or the reverse) after a crash.
  const unqueue = async (id: string) => {
    await queue.removeJobScheduler(scheduleJobId({ id }));
    await queue.remove(scheduleJobId({ id }));
  };

  const book: ScheduleBook = {
    async create(asker, request) {
      const text = request.text.trim();
      if (!text) return { ok: false, problem: "Say what to post, e.g. /remind in 20 minutes stretch." };
      if (text.length > MAX_TEXT) return { ok: false, problem: `A schedule's text is at most ${MAX_TEXT} characters.` };
      const when = parseWhen(request.when, now(), asker.timeZone);
      if (when.kind === "error")
        return { ok: false, problem: `${when.problem.charAt(0).toUpperCase()}${when.problem.slice(1)}.` };
      const existing = await list(asker.chat.conversationKey);
      if (existing.length >= opts.maxPerChat)
        return {
          ok: false,
          problem: `This chat already has ${existing.length} schedules, the most allowed; cancel one first (/schedules).`,
        };
      if (when.kind === "repeat" && !(await asker.mayRepeat()))
        return { ok: false, problem: "In groups only admins may create repeating schedules." };
      const record: ScheduleRecord = {
        id: Math.random().toString(36).slice(2, 8),
        chat: asker.chat,
        author: asker.author,
        kind: request.kind,
        text,
        rule: when.kind === "once" ? "once" : when.label,
        repeat: when.kind === "repeat",
        timeZone: asker.timeZone,
        createdAt: now().getTime(),
        ...(when.kind === "once" ? { at: when.at.getTime() } : {}),
        runs: 0,
        failures: 0,
      };
      await opts.redis.hset(key(record.chat.conversationKey), record.id, JSON.stringify(record));
      const data: ScheduleJobData = { conversationKey: record.chat.conversationKey, id: record.id };
      let next: Date;
      if (when.kind === "once") {
        await queue.add("schedule", data, {
          jobId: scheduleJobId(record),
          delay: Math.max(0, when.at.getTime() - now().getTime()),
          removeOnComplete: true,
          removeOnFail: true,
        });
        next = when.at;
      } else {
        const repeat = when.pattern
          ? { pattern: when.pattern, tz: asker.timeZone, limit: opts.maxRuns }
          : { every: (when.everyMinutes ?? 1) * msPerMinute, limit: opts.maxRuns };
        await queue.upsertJobScheduler(scheduleJobId(record), repeat, {
          name: "schedule",
          data,
          opts: { removeOnComplete: true, removeOnFail: true },
        });
        next = (await book.next(record)) ?? now();
      }
      const what = record.kind === "text" ? "I will post" : "I will answer";
      const confirmation =
        when.kind === "once"
          ? `✅ ${what} “${short(text)}” at ${describeInstant(next, asker.timeZone)}.`
          : `✅ ${what} “${short(text)}” ${when.label}; next at ${describeInstant(next, asker.timeZone)}. (id ${record.id})`;
      return { ok: true, schedule: record, next, confirmation };
    },
    list,
    async get(conversationKey, id) {
      const raw = await opts.redis.hget(key(conversationKey), id);
      return raw ? parse(raw) : undefined;
    },
    async cancel(conversationKey, id) {
      const removed = await opts.redis.hdel(key(conversationKey), id);
      await unqueue(id);
      return removed > 0;
    },
    async pause(record) {
      await book.update({ ...record, paused: true });
      await unqueue(record.id);
    },
    async update(record) {
      // Only while it still exists, checked and written in one step: a run finishing as the schedule is
      // cancelled must not bring it back.
      await opts.redis.eval(UPDATE_IF_PRESENT, 1, key(record.chat.conversationKey), record.id, JSON.stringify(record));
    },
    async next(record) {
      if (!record.repeat)
        return record.at !== undefined && record.at > now().getTime() ? new Date(record.at) : undefined;
      const scheduler = await queue.getJobScheduler(scheduleJobId(record));
      return scheduler?.next ? new Date(scheduler.next) : undefined;
    },
    async close() {
      await queue.close();
    },
  };
  return book;
}

/** The text on one line, cut to 60 characters, for confirmations and listings. */
export function short(text: string): string {
  const line = text.replace(/\s+/g, " ");
  return line.length > 60 ? `${line.slice(0, 59)}…` : line;
}
