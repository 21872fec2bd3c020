/**
 * Redis restarted under load. The whole bot runs on a private, durable redis-server
 * (test/support/private-redis.ts), with two workers sharing it. 20 questions from 10 Telegram
 * users are in flight, each answer mid-stream, when Redis is killed; it stays away for longer
 * than the queue's lock (so BullMQ hands the running jobs out again) and is started again.
 * Every question must end with exactly one bot message replying to it with its whole answer,
 * and nothing else from the bot. An update that arrives while Redis is down is not confirmed
 * to Telegram (getUpdates offset) until it is enqueued, and is answered once Redis is back.
 */
import { beforeAll, describe, expect } from "vitest";
import { privateChat, type FakeUser } from "../fakes/telegram-server.js";
import { qwen3Encoder } from "../fakes/llama-extras.js";
import { paced, textAnswer } from "../fakes/openai-server.js";
import { e2eTest } from "../support/fixtures.js";
import { waitUntilQueueDrained } from "../support/queue-drained.js";
import { allAnsweredOnce, auditAnswers, FAST_QUEUE, waitUntil, type Asked } from "../support/fault-kit.js";

const answerTo = (question: string) => `Answer to ${question}: all present and accounted for.`;

describe("Redis restarted under load", () => {
  // Qwen3's vocabulary for the fake model's /tokenize, loaded outside the test's own timeout (see telegram-harness.ts).
  beforeAll(qwen3Encoder, 120_000);

  e2eTest(
    "answers every message exactly once, and confirms an update only once it is enqueued",
    async ({ privateRedis, fakeTelegram, fakeModel, startStack }) => {
      const redis = await privateRedis();
      const tg = await fakeTelegram();
      // Answers asked before the crash stream for ~4 s (they outlive the outage); later ones are quick.
      let slow = true;
      const model = await fakeModel((request) => {
        const question = String(request.body.messages?.at(-1)?.content ?? "");
        return paced(textAnswer(answerTo(question)), slow ? 3 : 40);
      });
      // One worker slot per chat in each worker: every conversation streams at once.
      const env = {
        TELEGRAM_BOT_TOKEN: tg.token,
        TELEGRAM_API_ROOT: tg.apiRoot,
        OPENAI_BASE_URL: model.url,
        WORKER_CONCURRENCY: "12",
      };
      const first = await startStack({ redis: redis.testRedis("faults-redis"), env, worker: { queue: FAST_QUEUE } });
      await startStack({
        redis: redis.testRedis(first.redis.prefix),
        roles: ["worker"],
        env,
        worker: { queue: FAST_QUEUE },
      });

      const users: FakeUser[] = Array.from({ length: 10 }, (_, i) => ({ id: 3001 + i, first_name: `User${i + 1}` }));
      const asked: Asked[] = [];
      const say = (user: FakeUser, question: string) => {
        const { message, updateId } = tg!.userSays(privateChat(user), user, question);
        asked.push({ chatId: user.id, messageId: message.message_id as number, expected: answerTo(question) });
        return updateId as number;
      };
      for (let n = 1; n <= 2; n++) for (const user of users) say(user, `u${user.id} q${n}`);

      // Answers are streaming (their text shows in drafts) in most chats.
      const streaming = () => users.filter((u) => tg!.draft(u.id)?.text.startsWith("Answer to")).length;
      await tg.waitFor(() => streaming() >= 6, { timeoutMs: 10_000, what: "answers streaming" });

      await redis.stop("SIGKILL"); // a crash
      const late: FakeUser = { id: 3099, first_name: "Late" };
      const lateUpdate = say(late, `u${late.id} q1`);
      // The adapter gets the update (a long poll needs no Redis) but cannot enqueue it: Telegram must keep it.
      const delivered = () =>
        tg!
          .calls("getUpdates")
          .some(
            (c) => Array.isArray(c.result) && c.result.some((u: { update_id?: number }) => u.update_id === lateUpdate),
          );
      await tg.waitFor(delivered, { timeoutMs: 3000, what: "the adapter to receive the late update" });
      // Kept sleep, the fault itself: Redis stays down longer than the queue's lock (2 s here, 30 s by default), so
      // the running jobs look stalled afterwards.
      await new Promise((resolve) => setTimeout(resolve, 2500));
      expect(tg.pendingUpdateIds()).toContain(lateUpdate);
      expect(Math.max(...tg.getUpdatesOffsets())).toBeLessThanOrEqual(lateUpdate);
      expect(auditAnswers(tg, asked).lost.length).toBeGreaterThanOrEqual(10); // nothing of the second round yet

      slow = false;
      await redis.start();
      await waitUntil("every question answered", () => auditAnswers(tg!, asked).lost.length === 0, 20_000);
      await tg.waitFor(() => tg!.getUpdatesOffsets().some((o) => o > lateUpdate), {
        what: "the late update to be confirmed",
      });
      // Every job has finished: a recovered job that were to answer again has done so by now.
      await waitUntilQueueDrained(first.redis, { timeoutMs: 20_000 });

      const audit = auditAnswers(tg, asked);
      expect(audit).toMatchObject({ asked: 21, lost: [], duplicated: [], wrong: [], orphans: [] });
      expect(allAnsweredOnce(audit)).toBe(true);
      expect(tg.floodViolations()).toEqual([]);
      // Every question reached the model (a recovered job may ask again, but never answers twice: above).
      expect(new Set(model.requests.map((r) => String(r.body.messages?.at(-1)?.content))).size).toBe(21);
    },
    // A 2.5 s outage, two rounds of answers and the drain; more than the default 20 s on a busy machine.
    60_000,
  );
});
