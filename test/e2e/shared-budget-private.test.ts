/**
 * A hundred private Telegram chats streaming at once, served by two worker roles sharing one
 * KEY_PREFIX: the bot-wide budget (Telegram: about 30 messages a second) is kept in Redis, so
 * together they stay under it (the fake Bot API refuses anything over it), every chat's final
 * text lands, and no chat's final waits much longer than the budget itself makes necessary.
 */
import { beforeAll, describe, expect } from "vitest";
import { privateChat, type FakeUser } from "../fakes/telegram-server.js";
import { qwen3Encoder } from "../fakes/llama-extras.js";
import { paced, textAnswer } from "../fakes/openai-server.js";
import { e2eTest } from "../support/fixtures.js";

const CHATS = 100;
const answerFor = (n: number) => `Answer ${n}: mild, ${10 + (n % 15)} degrees.`;

/** Most timestamps inside any window of `windowMs` (the fake's own rule: (at − 1000, at]). */
function busiestWindow(times: number[], windowMs: number): number {
  const sorted = [...times].sort((x, y) => x - y);
  let best = 0;
  let start = 0;
  for (let end = 0; end < sorted.length; end++) {
    while (sorted[end]! - sorted[start]! >= windowMs) start++;
    best = Math.max(best, end - start + 1);
  }
  return best;
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

describe("one bot-wide budget, shared by two worker processes", () => {
  // Qwen3's vocabulary for the fake model's /tokenize, loaded outside the test's own timeout (see telegram-harness.ts).
  beforeAll(qwen3Encoder, 120_000);

  e2eTest(
    "answers a hundred private chats streaming at once under 30 messages a second, every final landing",
    async ({ fakeTelegram, fakeModel, testRedis, startStack }) => {
      const tg = await fakeTelegram(); // documented flood limits, enforced
      const modelDoneAt = new Map<number, number>();
      const streamMs: number[] = [];
      const model = await fakeModel({
        handler: (request) => {
          const asked = JSON.stringify(request.body.messages?.at(-1)?.content ?? "");
          const n = Number(/question (\d+)/.exec(asked)?.[1]);
          void request.outcome.then(() => {
            modelDoneAt.set(n, Date.now());
            streamMs.push(Date.now() - request.receivedAt);
          });
          return paced(textAnswer(answerFor(n)), 4); // 8 tokens: about 2 s of streaming each
        },
      });
      const shared = testRedis("shared-private");
      const env = {
        TELEGRAM_BOT_TOKEN: tg.token,
        TELEGRAM_API_ROOT: tg.apiRoot,
        OPENAI_BASE_URL: model.url,
        WORKER_CONCURRENCY: String(CHATS / 2),
      };
      await startStack({ env, roles: ["worker"], redis: shared });
      await startStack({ env, roles: ["worker"], redis: shared });
      await startStack({ env, roles: ["bots"], redis: shared });

      const users: FakeUser[] = Array.from({ length: CHATS }, (_, i) => ({ id: 30_000 + i, first_name: `User${i}` }));
      users.forEach((user, i) => tg!.userSays(privateChat(user), user, `question ${i}`));

      const finalOf = (i: number) => tg!.botMessages(users[i]!.id).find((m) => m.text === answerFor(i));
      await tg
        .waitFor(() => users.every((_, i) => finalOf(i)), { timeoutMs: 45_000, what: "every chat's final answer" })
        .catch((error: Error) => {
          throw new Error(`${users.filter((_, i) => finalOf(i)).length} of ${CHATS} finals landed; ${error.message}`);
        });

      // Nothing Telegram would have refused: no chat over its pace, the bot never over 30 a second.
      expect(tg.floodViolations()).toEqual([]);
      const counted = [...tg.calls("sendMessage"), ...tg.calls("editMessageText")].filter((c) => c.ok).map((c) => c.at);
      const peakPerSecond = busiestWindow(counted, 1000);
      expect(peakPerSecond).toBeLessThanOrEqual(30);
      // Each chat got exactly one message (drafts while writing, then the answer), with its whole text.
      for (const [i, user] of users.entries())
        expect(tg.botMessages(user.id).map((m) => m.text)).toEqual([answerFor(i)]);

      // No chat starved: a final lands within the time the budget needs for all hundred, after its model finished.
      const lag = users
        .map((user, i) => {
          const sent = tg!.calls("sendMessage").find((c) => c.ok && Number(c.params.chat_id) === user.id);
          return (sent?.at ?? Infinity) - (modelDoneAt.get(i) ?? Infinity);
        })
        .sort((x, y) => x - y);
      expect(lag.every(Number.isFinite)).toBe(true);
      const allDrafts = tg
        .calls("sendMessageDraft")
        .filter((c) => c.ok)
        .map((c) => c.at);
      console.info(
        `100 private chats: final after model done ms min ${lag[0]} p50 ${percentile(lag, 50)} p95 ${percentile(lag, 95)} max ${lag.at(-1)}; ` +
          `peak counted requests ${peakPerSecond}/s, peak incl. drafts ${busiestWindow([...counted, ...allDrafts], 1000)}/s, ` +
          `${allDrafts.length} drafts, ${counted.length} messages; model streaming p50 ${percentile(
            [...streamMs].sort((x, y) => x - y),
            50,
          )} ms`,
      );
      // A hundred finals at the gate's full rate (45 ms apart) take 4.5 s, plus a chat's own 1.1 s spacing: 8 s on a
      // machine with CPU to spare. This process runs the fakes and every role, so when other processes take the cores
      // its timers run late: the bound stretches by how much longer than its 2 s the fake model's streaming took.
      const machineSlowness = Math.max(
        1,
        percentile(
          [...streamMs].sort((x, y) => x - y),
          50,
        ) / 2000,
      );
      expect(lag.at(-1)!).toBeLessThan(8000 * machineSlowness);
    },
    // Three roles' start-up and a hundred answers; on a busy machine more than the default 20 s.
    90_000,
  );
});
