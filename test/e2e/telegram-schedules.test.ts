/**
 * Reminders and schedules on Telegram, end to end (fake Bot API, fake model scripted to call the
 * schedule tools, real Redis, real BullMQ, bots + worker roles in-process): "remind me in 5 seconds"
 * is posted once with two workers, one stopped in between; a prompt schedule runs the agent (a tool
 * call included) three times across a restart of every role and stops when cancelled from /schedules;
 * /timezone changes how "tomorrow at 8" is read; bad zones, past times, an eleventh schedule and a
 * non-admin's repeating schedule in a group each get one clear line.
 */
import { beforeAll, describe, expect } from "vitest";
import type { RecordedRequest } from "../fakes/openai-server.js";
import { qwen3Encoder } from "../fakes/llama-extras.js";
import { textAnswer, toolCallAnswer } from "../fakes/openai-server.js";
import { type FakeChat, type FakeTelegram, type FakeUser, privateChat } from "../fakes/telegram-server.js";
import { QUEUE_NAME, SCHEDULE_QUEUE_NAME } from "../../src/redis/keys.js";
import { describeInstant, wallClockToInstant } from "../../src/schedules/schedule-when.js";
import { e2eTest } from "../support/fixtures.js";
import { type QueueLocation, waitUntilQueueDrained } from "../support/queue-drained.js";
import { afterReading } from "./telegram-harness.js";

const alice: FakeUser = { id: 2001, first_name: "Alice" };
const bob: FakeUser = { id: 2002, first_name: "Bob" };

/** A user writes once the bot's last message was read; resolves with the bot's reply to it. */
async function say(tg: FakeTelegram, chat: FakeChat, user: FakeUser, text: string) {
  await afterReading(tg, chat.id);
  const { message } = tg.userSays(chat, user, text);
  return tg.waitFor(() => tg.botMessages(chat.id).find((m) => m.replyToMessageId === message.message_id), {
    timeoutMs: 8000,
    what: `the reply to "${text}"`,
  });
}

/** The tool results of this turn (after the last user message). */
const toolResults = (request: RecordedRequest) => {
  const messages = request.body.messages ?? [];
  const turn = messages.slice(messages.findLastIndex((m) => m.role === "user") + 1);
  return turn.filter((m) => m.role === "tool").map((m) => String(m.content));
};
const lastUser = (request: RecordedRequest) =>
  String((request.body.messages ?? []).filter((m) => m.role === "user").at(-1)?.content ?? "");

/** Until no schedule can fire again and no queued message waits for an answer (slowly on a busy machine). */
const schedulesDone = (redis: QueueLocation) =>
  waitUntilQueueDrained(redis, { queues: [SCHEDULE_QUEUE_NAME, QUEUE_NAME], schedulers: true, timeoutMs: 40_000 });

describe("Telegram schedules, end to end", () => {
  // Qwen3's vocabulary for the fake model's /tokenize, loaded outside the test's own timeout (see telegram-harness.ts).
  beforeAll(qwen3Encoder, 120_000);

  e2eTest(
    '"remind me in 5 seconds to stretch" is posted about 5 s later, once, with two workers and one stopped in between',
    async ({ startTelegram, startStack }) => {
      const e2e = await startTelegram({ roles: [] });
      const { tg, model } = e2e;
      await startStack({ env: e2e.env, redis: e2e.stack.redis }); // bots + a worker that stays
      const two = await startStack({ env: e2e.env, redis: e2e.stack.redis, roles: ["worker"] });
      model.setHandler((request) => {
        const results = toolResults(request);
        if (results.length === 0)
          return toolCallAnswer([
            { name: "schedule_message", arguments: { when: "in 5 seconds", text: "stretch", kind: "text" } },
          ]);
        const { next } = JSON.parse(results[0]!) as { next: string };
        return textAnswer(`OK, at ${next}.`);
      });
      const chat = privateChat(alice);
      const asked = Date.now();
      const reply = await say(tg, chat, alice, "remind me in 5 seconds to stretch");
      await tg.waitFor(() => tg.botMessages(chat.id).find((m) => m.text.includes("OK, at ")), {
        what: "the confirmation",
      });
      expect(reply.text).toMatch(/^✅ schedule_message\(in 5 seconds, stretch, text\)\n\nOK, at .+ \(UTC\)\.$/);
      // The question's job has finished (answer stored) before a worker stops: the stop falls between scheduling and firing.
      await waitUntilQueueDrained(e2e.stack.redis);
      await two.close();
      const reminder = await tg.waitFor(() => tg.botMessages(chat.id).find((m) => m.text === "⏰ stretch"), {
        timeoutMs: 15_000,
        what: "the reminder",
      });
      const postedAfter = tg.calls().find((c) => c.method === "sendMessage" && c.params.text === "⏰ stretch");
      expect(postedAfter).toBeDefined();
      expect(Date.now() - asked).toBeGreaterThanOrEqual(4_500);
      expect(reminder.replyToMessageId).toBeUndefined();
      await schedulesDone(e2e.stack.redis);
      expect(tg.botMessages(chat.id).filter((m) => m.text === "⏰ stretch")).toHaveLength(1);
      // The model was offered the schedule tools, and called no more after the reminder.
      expect(model.requests[0]?.body.tools?.map((t) => t.function.name)).toEqual(
        expect.arrayContaining(["schedule_message", "list_schedules", "cancel_schedule"]),
      );
      expect(model.requests).toHaveLength(2);
    },
    60_000,
  );

  e2eTest(
    "a prompt schedule runs the agent with a tool call three times across a restart, then /schedules cancels it",
    async ({ startTelegram, startStack }) => {
      const e2e = await startTelegram({ roles: [] });
      const { tg, model } = e2e;
      // A "minute" of the rule lasts 2.5 s in this deployment: BullMQ's job scheduler, sooner.
      const worker = { schedules: { msPerMinute: 2_500 } };
      let roles = await startStack({ env: e2e.env, redis: e2e.stack.redis, worker });
      let runs = 0;
      // The scheduled runs the model answered, each by its place in the conversation (the index of its question).
      // A run cut short by the restart is answered again by its retry with the same history, so it counts once:
      // its retry edits the same reply, and the user sees one answer per run.
      const runTurns = new Set<number>();
      model.setHandler((request) => {
        const question = lastUser(request);
        const results = toolResults(request);
        if (question.includes("every minute")) {
          if (results.length === 0)
            return toolCallAnswer([
              {
                name: "schedule_message",
                arguments: { when: "every minute", text: "what time is it?", kind: "prompt" },
              },
            ]);
          return textAnswer("Scheduled.");
        }
        if (question === "what time is it?") {
          if (results.length === 0) return toolCallAnswer([{ name: "get_time", arguments: {} }]);
          runs++;
          runTurns.add((request.body.messages ?? []).findLastIndex((m) => m.role === "user"));
          return textAnswer(`Run ${runs}: ${(JSON.parse(results[0]!) as { iso?: string }).iso ?? "no time"}`);
        }
        return textAnswer("?");
      });
      const chat = privateChat(alice);
      await say(tg, chat, alice, "every minute tell me the time");
      // Each run's answer: a new message of the conversation.
      const answers = () => tg.botMessages(chat.id).filter((m) => /Run \d+: \d{4}-\d\d-\d\dT/.test(m.text));
      await tg.waitFor(() => answers().length >= 1 || undefined, { timeoutMs: 30_000, what: "the first run" });
      // Every role restarts: the schedule lives in Redis and BullMQ, not in a process.
      await roles.close();
      roles = await startStack({ env: e2e.env, redis: e2e.stack.redis, worker });
      await tg.waitFor(() => answers().length >= 3 || undefined, { timeoutMs: 40_000, what: "three runs" });

      const list = await say(tg, chat, alice, "/schedules");
      expect(list.text).toMatch(/^Schedules here:\n• \w+: ask “what time is it\?”, every minute, next /);
      const cancel = list.buttons?.flat().find((b) => b.text.startsWith("Cancel "));
      expect(cancel?.callback_data).toMatch(/^cfg:schedules cancel \w+$/);
      await afterReading(tg, chat.id);
      tg.userPresses(chat.id, alice, list.messageId, cancel!.callback_data!);
      await tg.waitFor(
        () => tg.botMessages(chat.id).find((m) => m.messageId === list.messageId && m.text.startsWith("✅ Cancelled")),
        { what: "the list saying it was cancelled" },
      );
      // Runs queued as messages before the cancel drain first.
      await schedulesDone(e2e.stack.redis);
      // Whatever run was already queued as a message has been answered (its reply posted); nothing can start another.
      await expect.poll(() => answers().length, { timeout: 20_000 }).toBe(runTurns.size);
      const settled = answers().length;
      expect(settled).toBeGreaterThanOrEqual(3);
      // Each run called get_time before answering.
      const timeCalls = model.requests.filter((r) =>
        (r.body.messages ?? []).some((m) => m.role === "assistant" && JSON.stringify(m).includes("get_time")),
      );
      expect(timeCalls.length).toBeGreaterThanOrEqual(3);
      expect((await say(tg, chat, alice, "/schedules")).text).toBe(
        "No schedules here. Add one with /remind <when> <text>.",
      );
      expect(answers()).toHaveLength(settled);
    },
    180_000,
  );

  e2eTest(
    "/timezone then /remind tomorrow at 8 states the instant in that zone; bad input gets one clear line",
    async ({ startTelegram }) => {
      const { tg } = await startTelegram();
      const chat = privateChat(alice);
      expect((await say(tg, chat, alice, "/timezone Mars/Olympus")).text).toBe(
        "“Mars/Olympus” is not a time zone I know. Use an IANA name like Asia/Shanghai, Europe/Berlin or America/New_York.",
      );
      expect((await say(tg, chat, alice, "/timezone Asia/Shanghai")).text).toBe(
        "✅ Time zone here is now Asia/Shanghai. Times in /remind and schedules are read in it.",
      );
      const confirm = await say(tg, chat, alice, "/remind tomorrow at 8 call mom");
      const today = new Intl.DateTimeFormat("en-CA", { timeZone: "Asia/Shanghai" }).format(new Date());
      const [y, mo, d] = today.split("-").map(Number) as [number, number, number];
      const expected = wallClockToInstant({ y, mo, d: d + 1, h: 8, mi: 0 }, "Asia/Shanghai");
      expect(confirm.text).toBe(`✅ I will post “call mom” at ${describeInstant(expected, "Asia/Shanghai")}.`);
      expect(confirm.text).toMatch(/ 08:00 \(Asia\/Shanghai\)\.$/);

      expect((await say(tg, chat, alice, "/remind 2020-01-01 08:00 too late")).text).toBe(
        "That time is already past; give a time in the future.",
      );
      expect((await say(tg, chat, alice, "/remind every 10 seconds spam")).text).toBe(
        "A schedule repeats at most once a minute.",
      );
      for (let i = 2; i <= 10; i++)
        expect((await say(tg, chat, alice, `/remind in ${i} hours note ${i}`)).text).toMatch(/^✅ I will post/);
      expect((await say(tg, chat, alice, "/remind in 11 hours one more")).text).toBe(
        "This chat already has 10 schedules, the most allowed; cancel one first (/schedules).",
      );

      // In a group, a member who is not an admin may set a one-off reminder but not a repeating one.
      const group: FakeChat = { id: -1009876543210, type: "supergroup", title: "Team" };
      expect((await say(tg, group, bob, "/remind every weekday at 08:00 standup")).text).toBe(
        "In groups only admins may create repeating schedules.",
      );
      expect((await say(tg, group, bob, "/remind in 1 hour standup")).text).toMatch(/^✅ I will post “standup” at /);
    },
    60_000,
  );
});
