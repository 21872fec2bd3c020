/**
 * Schedules over real Redis and real BullMQ (delayed jobs and job schedulers): a reminder fires once
 * with two workers even when one is killed before it is due; a repeating prompt runs three times
 * across a restart of its worker and stops when cancelled; the limits and the late/failed notes.
 */
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { SCHEDULE_QUEUE_NAME } from "../../src/redis/keys.js";
import {
  createScheduleBook,
  type ScheduleAsker,
  type ScheduleBook,
  type ScheduleChat,
  type ScheduleRecord,
} from "../../src/schedules/schedule-book.js";
import {
  type ScheduleDelivery,
  type ScheduleRunner,
  startScheduleRunner,
} from "../../src/schedules/schedule-runner.js";
import { createTestRedis, type TestRedis } from "../support/redis.js";

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

const chat: ScheduleChat = { platform: "telegram", conversationKey: "tg:42", chatId: "42", chatType: "private" };
const group: ScheduleChat = { platform: "telegram", conversationKey: "tg:-100", chatId: "-100", chatType: "group" };

function asker(over: Partial<ScheduleAsker> = {}): ScheduleAsker {
  return {
    chat,
    author: { id: "7", displayName: "Ann" },
    timeZone: "UTC",
    mayRepeat: async () => true,
    ...over,
  };
}

interface Rig {
  t: TestRedis;
  book: ScheduleBook;
  posted: { chat: ScheduleChat; text: string }[];
  asked: { record: ScheduleRecord; runId: string; note?: string }[];
  delivery: ScheduleDelivery;
  runner(opts?: { now?: () => Date }): Promise<ScheduleRunner>;
  counts(): Promise<Record<string, number>>;
  schedulers(): Promise<number>;
}

async function rig(opts: { msPerMinute?: number; now?: () => Date; failAsk?: boolean } = {}): Promise<Rig> {
  const t = createTestRedis("sched");
  closers.push(() => t.cleanup());
  const book = createScheduleBook({
    redis: t.redis,
    prefix: t.prefix,
    maxPerChat: 10,
    maxRuns: 100,
    ...(opts.msPerMinute ? { msPerMinute: opts.msPerMinute } : {}),
    ...(opts.now ? { now: opts.now } : {}),
  });
  closers.push(() => book.close());
  const posted: Rig["posted"] = [];
  const asked: Rig["asked"] = [];
  const delivery: ScheduleDelivery = {
    async post(c, text) {
      posted.push({ chat: c, text });
    },
    async ask(record, runId, note) {
      if (opts.failAsk) throw new Error("model server down");
      asked.push({ record, runId, ...(note ? { note } : {}) });
    },
  };
  const queue = new Queue(SCHEDULE_QUEUE_NAME, { connection: t.redis, prefix: t.prefix });
  closers.push(() => queue.close());
  return {
    t,
    book,
    posted,
    asked,
    delivery,
    async runner(o = {}) {
      const runner = startScheduleRunner({
        connection: () => new Redis(t.url, { maxRetriesPerRequest: null }),
        redis: t.redis,
        prefix: t.prefix,
        book,
        delivery,
        maxRuns: 100,
        lockDurationMs: 2_000,
        stalledIntervalMs: 1_000,
        ...(o.now ? { now: o.now } : {}),
      });
      closers.push(() => runner.close(true));
      await runner.ready();
      return runner;
    },
    counts: () => queue.getJobCounts("delayed", "wait", "active", "prioritized"),
    schedulers: () => queue.getJobSchedulersCount(),
  };
}

const idle = (c: Record<string, number>) => Object.values(c).every((n) => n === 0);

describe("schedules", () => {
  it("a reminder in 2 seconds is posted once with two workers, one of them killed before it is due", async () => {
    const r = await rig();
    const a = await r.runner();
    await r.runner();
    const made = await r.book.create(asker(), { when: "in 2 seconds", text: "stretch", kind: "text" });
    expect(made.ok && made.confirmation).toMatch(
      /^✅ I will post “stretch” at \w{3} \d{4}-\d\d-\d\d \d\d:\d\d \(UTC\)\.$/,
    );
    await a.close(true);
    await expect.poll(() => r.posted.length, { timeout: 10_000 }).toBe(1);
    expect(r.posted[0]).toEqual({ chat, text: "⏰ stretch" });
    // Nothing is left to fire, and the once schedule is gone from the chat's list.
    await expect.poll(async () => idle(await r.counts())).toBe(true);
    expect(await r.book.list(chat.conversationKey)).toEqual([]);
    expect(r.posted).toHaveLength(1);
  });

  it("a prompt every minute runs three times across a worker restart, then cancelling stops it", async () => {
    // One "minute" of the rule lasts 400 ms here: the same BullMQ job scheduler, sooner.
    const r = await rig({ msPerMinute: 400 });
    let runner = await r.runner();
    const made = await r.book.create(asker(), { when: "every minute", text: "today's AI news", kind: "prompt" });
    expect(made.ok).toBe(true);
    const id = made.ok ? made.schedule.id : "";
    await expect.poll(() => r.asked.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
    await runner.close();
    runner = await r.runner();
    await expect.poll(() => r.asked.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(3);
    expect(r.asked.slice(0, 3).map((a) => a.record.text)).toEqual(Array(3).fill("today's AI news"));
    // Each run is its own message: distinct run ids.
    expect(new Set(r.asked.map((a) => a.runId)).size).toBe(r.asked.length);
    expect(await r.book.cancel(chat.conversationKey, id)).toBe(true);
    await expect.poll(async () => idle(await r.counts())).toBe(true);
    const after = r.asked.length;
    expect(await r.book.list(chat.conversationKey)).toEqual([]);
    expect(await r.book.cancel(chat.conversationKey, id)).toBe(false);
    // No job is left that could deliver again.
    expect(await r.schedulers()).toBe(0);
    expect(r.asked.length).toBe(after);
  });

  it("refuses with one line: past times, an eleventh schedule, a non-admin's repeating schedule in a group", async () => {
    const r = await rig();
    const refused = async (p: ReturnType<ScheduleBook["create"]>) => {
      const result = await p;
      return result.ok ? "created" : result.problem;
    };
    expect(await refused(r.book.create(asker(), { when: "2020-01-01 08:00", text: "x", kind: "text" }))).toBe(
      "That time is already past; give a time in the future.",
    );
    expect(await refused(r.book.create(asker(), { when: "soonish", text: "x", kind: "text" }))).toMatch(
      /^Could not read the time "soonish"; write it like /,
    );
    const member = asker({ chat: group, mayRepeat: async () => false });
    expect(await refused(r.book.create(member, { when: "every day at 8", text: "x", kind: "text" }))).toBe(
      "In groups only admins may create repeating schedules.",
    );
    expect(await refused(r.book.create(member, { when: "in 1 hour", text: "x", kind: "text" }))).toBe("created");
    for (let i = 0; i < 10; i++)
      expect(await refused(r.book.create(asker(), { when: `in ${i + 1} hours`, text: `t${i}`, kind: "text" }))).toBe(
        "created",
      );
    expect(await refused(r.book.create(asker(), { when: "in 11 hours", text: "x", kind: "text" }))).toBe(
      "This chat already has 10 schedules, the most allowed; cancel one first (/schedules).",
    );
    // The other chat's schedule did not count against this one.
    expect(await r.book.list(group.conversationKey)).toHaveLength(1);
  });

  it("a run missed by less than an hour fires with a note; later than that is skipped with a note", async () => {
    let skew = 0;
    const r = await rig();
    await r.runner({ now: () => new Date(Date.now() + skew) });
    skew = 20 * 60_000;
    await r.book.create(asker(), { when: "in 1 second", text: "late one", kind: "text" });
    await expect.poll(() => r.posted.length, { timeout: 10_000 }).toBe(1);
    expect(r.posted[0]?.text).toMatch(/^⏰ late one\n\(late: due .+ \(UTC\), the bot was down\)$/);
    skew = 2 * 3_600_000;
    await r.book.create(asker(), { when: "in 1 second", text: "too late", kind: "text" });
    await expect.poll(() => r.posted.length, { timeout: 10_000 }).toBe(2);
    expect(r.posted[1]?.text).toMatch(/^⏰ Skipped “too late”, due .+: the bot was down at that time\.$/);
  });

  it("three failures in a row pause a repeating schedule and say so", async () => {
    const r = await rig({ msPerMinute: 300, failAsk: true });
    await r.runner();
    const made = await r.book.create(asker(), { when: "every minute", text: "news", kind: "prompt" });
    const id = made.ok ? made.schedule.id : "";
    await expect.poll(() => r.posted.length, { timeout: 10_000 }).toBe(1);
    expect(r.posted[0]?.text).toBe(
      `⚠️ Schedule ${id} (“news”) failed 3 times in a row and is paused; /schedules to cancel it.`,
    );
    const [listed] = await r.book.list(chat.conversationKey);
    expect(listed).toMatchObject({ id, paused: true, failures: 3 });
    await expect.poll(async () => idle(await r.counts())).toBe(true);
    expect(r.posted).toHaveLength(1);
  });
});
