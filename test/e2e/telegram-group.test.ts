/**
 * Telegram groups end to end (fake Bot API in strict flood mode, fake model, real Redis,
 * bots + worker roles in-process): a group shares one conversation with speaker names;
 * unaddressed chatter is neither answered nor sent to the model; forum topics are
 * conversations of their own that still share the group's edit budget.
 */
import { describe, expect } from "vitest";
import type { FakeChat, FakeUser } from "../fakes/telegram-server.js";
import { paced, textAnswer } from "../fakes/openai-server.js";
import { arrivalsAt, callsTo, expectNoFlood, MESSAGE_METHODS, sentHistory, smallestGapMs } from "./telegram-harness.js";
import { e2eTest } from "../support/fixtures.js";

const alice: FakeUser = { id: 1001, first_name: "Alice" };
const bob: FakeUser = { id: 1002, first_name: "Bob", username: "bobby" };
const carol: FakeUser = { id: 1003, first_name: "Carol" };

/**
 * Telegram asks for at most 20 messages a minute in a group, so the bot grants itself a slot every
 * 3.1 s; requests reach the server with some latency jitter after their slot (more on a loaded CI box).
 * With only a handful of requests the fake's 20-a-minute window cannot tell, so the gap is checked here.
 */
const GROUP_SPACING_MS = 2700;

describe("Telegram group chat, end to end", () => {
  e2eTest(
    "shares one conversation with speaker names, answers each asker, and ignores unaddressed chatter",
    async ({ startTelegram }) => {
      const e2e = await startTelegram();
      const { tg, model } = e2e;
      const group: FakeChat = { id: -1001234567890, type: "supergroup", title: "Trip planning" };
      model.script([
        textAnswer("The capital of France is **Paris**."),
        textAnswer("Alice asked what the capital of France is."),
      ]);

      const { message: aliceAsks } = tg.userSays(group, alice, "@test_bot what is the capital of France?");
      // Chatter not meant for the bot, while it is answering.
      const { message: carolChats } = tg.userSays(group, carol, "lunch at noon, anyone? I know what Alice asked");
      const first = await tg.waitFor(
        () => tg.botMessages(group.id).find((m) => m.text === "The capital of France is Paris."),
        {
          timeoutMs: 8000,
          what: "the answer to Alice",
        },
      );
      // Bob replies to the bot's answer (a reply to the bot addresses it without a mention).
      const { message: bobAsks } = tg.userSays(group, bob, "what did Alice ask?", { replyTo: first.messageId });
      const second = await tg.waitFor(
        () => tg.botMessages(group.id).find((m) => m.text === "Alice asked what the capital of France is."),
        {
          timeoutMs: 8000,
          what: "the answer to Bob",
        },
      );

      // The model saw the group's shared conversation, each message attributed to its speaker.
      expect(model.requests).toHaveLength(2);
      expect(sentHistory(model.requests[0])).toEqual([
        { role: "user", content: "Alice: what is the capital of France?" },
      ]);
      expect(sentHistory(model.requests[1])).toEqual([
        { role: "user", content: "Alice: what is the capital of France?" },
        { role: "assistant", content: "The capital of France is **Paris**." },
        {
          role: "user",
          content: 'Bob: (replying to Test Bot: "The capital of France is Paris.")\nwhat did Alice ask?',
        },
      ]);
      // Carol's message was not addressed to the bot: no answer, and it is not stored as context
      // (only what the bot answers joins the shared conversation).
      expect(JSON.stringify(model.requests.map((r) => r.body.messages))).not.toContain("lunch");
      expect(tg.messages(group.id).filter((m) => m.replyToMessageId === carolChats.message_id)).toEqual([]);

      // Each answer replies to the message it answers, with its final text and no Stop button left.
      expect(
        tg.botMessages(group.id).map((m) => ({ text: m.text, replyTo: m.replyToMessageId, buttons: m.buttons })),
      ).toEqual([
        { text: "The capital of France is Paris.", replyTo: aliceAsks.message_id, buttons: undefined },
        { text: "Alice asked what the capital of France is.", replyTo: bobAsks.message_id, buttons: undefined },
      ]);
      expect(first.entities).toEqual([{ type: "bold", offset: 25, length: 5 }]);
      expect(second.replyToMessageId).toBe(bobAsks.message_id);

      // A placeholder (with a Stop button) at once, then the final edit. Bob's answer was complete by the time
      // the group's budget allowed its first request, so it went out whole: nothing stale was ever sent.
      const requests = arrivalsAt(tg, group.id, MESSAGE_METHODS);
      expect(requests[0]).toMatchObject({ method: "sendMessage", params: { text: "…" } });
      expect(JSON.stringify(requests[0]!.params.reply_markup)).toContain("⏹ Stop");
      expect(requests.length).toBeLessThanOrEqual(4);
      expect(first.history).toEqual(["…", "The capital of France is Paris."]);
      expect(second.history.at(-1)).toBe("Alice asked what the capital of France is.");
      expect(smallestGapMs(requests)).toBeGreaterThanOrEqual(GROUP_SPACING_MS);
      const actions = callsTo(tg, group.id, ["sendChatAction"]);
      expect(actions.length).toBeGreaterThanOrEqual(2);
      expect(actions.every((c) => c.params.action === "typing" && c.params.message_thread_id === undefined)).toBe(true);
      expectNoFlood(tg);
    },
  );

  e2eTest(
    "keeps forum topics apart (own histories, answers in their topic) while they share the group's budget",
    async ({ startTelegram }) => {
      const e2e = await startTelegram();
      const { tg, model } = e2e;
      const forum: FakeChat = { id: -1009876543210, type: "supergroup", title: "Help desk", is_forum: true };
      tg.addChat(forum);
      const weather = tg.createForumTopic(forum.id, "Weather", alice);
      const cooking = tg.createForumTopic(forum.id, "Cooking", bob);
      // Both answers are being written at the same time (~2 s each): both topics want edits at once.
      model.setHandler((request) => {
        const asked = JSON.stringify(request.body.messages?.at(-1)?.content ?? "");
        return asked.includes("umbrella")
          ? paced(textAnswer("Yes, take an **umbrella**: rain is likely this afternoon."), 8)
          : paced(textAnswer("Boil the egg for *seven* minutes, then cool it in cold water."), 8);
      });

      const { message: inWeather } = tg.userSays(forum, alice, "@test_bot do I need an umbrella today?", {
        threadId: weather,
      });
      const { message: inCooking } = tg.userSays(forum, bob, "/ask how long do I boil an egg?", { threadId: cooking });
      const umbrella = "Yes, take an umbrella: rain is likely this afternoon.";
      const egg = "Boil the egg for seven minutes, then cool it in cold water.";
      await tg.waitFor(
        () =>
          tg.visibleText(forum.id, { threadId: weather }) === umbrella &&
          tg.visibleText(forum.id, { threadId: cooking }) === egg,
        { timeoutMs: 15_000, what: "both answers in their topics" },
      );

      // Two conversations: each request carries only its own topic's question, and they ran side by side.
      expect(model.requests).toHaveLength(2);
      const byTopic = (word: string) => model.requests.find((r) => JSON.stringify(r.body.messages).includes(word));
      expect(sentHistory(byTopic("umbrella"))).toEqual([
        { role: "user", content: "Alice: do I need an umbrella today?" },
      ]);
      expect(sentHistory(byTopic("egg"))).toEqual([{ role: "user", content: "Bob: how long do I boil an egg?" }]);
      const finals = callsTo(tg, forum.id, ["editMessageText"]).filter((c) => c.ok);
      expect(Math.max(...model.requests.map((r) => r.receivedAt))).toBeLessThan(Math.min(...finals.map((c) => c.at)));

      // Each answer is in its own topic, replying to its question.
      const inTopic = (threadId: number) =>
        tg.botMessages(forum.id, { threadId }).map((m) => ({ text: m.text, replyTo: m.replyToMessageId }));
      expect(inTopic(weather)).toEqual([{ text: umbrella, replyTo: inWeather.message_id }]);
      expect(inTopic(cooking)).toEqual([{ text: egg, replyTo: inCooking.message_id }]);
      const threadsOf = (method: string) =>
        callsTo(tg, forum.id, [method])
          .filter((c) => c.ok)
          .map((c) => Number(c.params.message_thread_id));
      expect(threadsOf("sendMessage").sort()).toEqual([weather, cooking].sort());
      expect(new Set(threadsOf("sendChatAction"))).toEqual(new Set([weather, cooking]));

      // One budget for the whole group: every message request of both topics ~3 s apart, none refused.
      const requests = arrivalsAt(tg, forum.id, MESSAGE_METHODS);
      expect(requests.length).toBeGreaterThanOrEqual(3);
      expect(smallestGapMs(requests)).toBeGreaterThanOrEqual(GROUP_SPACING_MS);
      expectNoFlood(tg);
    },
  );
});
