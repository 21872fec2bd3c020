/**
 * One Telegram group, several answers streaming into it at once, served by TWO worker roles
 * (two in-process worker stacks sharing one KEY_PREFIX) and one bots role: the group's edit
 * budget (forum topics share it) is kept in Redis, so together they stay inside Telegram's
 * limits (the fake Bot API refuses anything over them) and every final text lands.
 */
import { describe, expect } from "vitest";
import type { FakeChat, FakeUser } from "../fakes/telegram-server.js";
import { paced, textAnswer } from "../fakes/openai-server.js";
import type { Stack } from "../support/stack.js";
import { e2eTest } from "../support/fixtures.js";

const alice: FakeUser = { id: 2001, first_name: "Alice" };
const bob: FakeUser = { id: 2002, first_name: "Bob" };
const carol: FakeUser = { id: 2003, first_name: "Carol" };

const ANSWERS: Record<string, string> = {
  trains: "Trains leave every hour from the central station, the first at six and the last at eleven at night.",
  hotels: "Three hotels near the old town still have rooms for the weekend, all under a hundred euros.",
  museums:
    "Most museums open at ten and close on Mondays; the art museum is free on the first Sunday of the month, " +
    "and the history museum has a guided tour in English at two in the afternoon every day except Monday.",
};

/** Sum of one outcome of chatbot_jobs_total in a stack. */
async function jobsDone(stack: Stack): Promise<number> {
  const metric = await stack.metrics.jobs.get();
  return metric.values.filter((v) => v.labels.outcome === "done").reduce((sum, v) => sum + v.value, 0);
}

describe("one group's edit budget, shared by two worker processes", () => {
  e2eTest(
    "keeps three answers streaming into two forum topics and the main chat inside the group's limits",
    async ({ fakeTelegram, fakeModel, testRedis, startStack }) => {
      const tg = await fakeTelegram(); // documented flood limits, enforced
      const model = await fakeModel({
        handler: (request) => {
          const asked = JSON.stringify(request.body.messages?.at(-1)?.content ?? "");
          const topic = Object.keys(ANSWERS).find((t) => asked.includes(t)) ?? "trains";
          // About 2 s for the short answers, 5 s for the long one: all three are streaming at once.
          return paced(textAnswer(ANSWERS[topic]!), topic === "museums" ? 10 : 12);
        },
      });
      const shared = testRedis("shared-group");
      const env = {
        TELEGRAM_BOT_TOKEN: tg.token,
        TELEGRAM_API_ROOT: tg.apiRoot,
        OPENAI_BASE_URL: model.url,
        WORKER_CONCURRENCY: "2",
      };
      // Two worker processes (each with its own Redis connections and gate instance), then the adapter.
      const stacks: Stack[] = [];
      stacks.push(await startStack({ env, roles: ["worker"], redis: shared }));
      stacks.push(await startStack({ env, roles: ["worker"], redis: shared }));
      stacks.push(await startStack({ env, roles: ["bots"], redis: shared }));

      const group: FakeChat = { id: -1009876543210, type: "supergroup", title: "City trip", is_forum: true };
      tg.addChat(group);
      const travel = tg.createForumTopic(group.id, "Travel", alice);
      const sights = tg.createForumTopic(group.id, "Sights", bob);
      tg.userSays(group, alice, "@test_bot when do trains leave?", { threadId: travel });
      tg.userSays(group, bob, "@test_bot what about museums?", { threadId: sights });
      tg.userSays(group, carol, "@test_bot any hotels left?");

      const landed = (threadId: number | undefined, text: string) => {
        const messages = tg!.botMessages(group.id, threadId !== undefined ? { threadId } : {});
        return messages.some((m) => m.text === text && !m.buttons);
      };
      const mainChat = () => tg!.botMessages(group.id).filter((m) => m.threadId === undefined);
      await tg.waitFor(
        () =>
          landed(travel, ANSWERS.trains!) &&
          landed(sights, ANSWERS.museums!) &&
          mainChat().some((m) => m.text === ANSWERS.hotels && !m.buttons),
        { timeoutMs: 17_000, what: "the three final answers" },
      );

      // Nothing Telegram would have refused, and every counted request at least the group's spacing apart.
      expect(tg.floodViolations()).toEqual([]);
      const counted = [...tg.calls("sendMessage"), ...tg.calls("editMessageText")]
        .filter((c) => Number(c.params.chat_id) === group.id)
        .map((c) => c.at)
        .sort((x, y) => x - y);
      const gaps = counted.slice(1).map((t, i) => t - counted[i]!);
      // The gate grants 3.1 s apart; latency and a busy test machine shift arrivals a little (two processes
      // pacing on their own would send at the same moment).
      expect(Math.min(...gaps)).toBeGreaterThanOrEqual(2000);
      // Each answer is one message in its own place, with its whole text and no Stop button left.
      expect(tg.botMessages(group.id, { threadId: travel }).map((m) => m.text)).toEqual([ANSWERS.trains]);
      expect(tg.botMessages(group.id, { threadId: sights }).map((m) => m.text)).toEqual([ANSWERS.museums]);
      expect(mainChat().map((m) => m.text)).toEqual([ANSWERS.hotels]);
      // Both worker processes answered: the budget really was shared between processes.
      // (A job counts as done once its turn is in history, just after its final text landed.)
      const doneBy = () => Promise.all([jobsDone(stacks[0]!), jobsDone(stacks[1]!)]);
      await expect.poll(async () => (await doneBy()).reduce((sum, n) => sum + n, 0), { timeout: 5000 }).toBe(3);
      const done = await doneBy();
      expect(Math.min(...done)).toBeGreaterThanOrEqual(1);
    },
  );
});
