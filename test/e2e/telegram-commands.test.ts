/**
 * Telegram commands end to end (fake Bot API in strict flood mode, fake model, real Redis,
 * bots + worker roles in-process): /stop and the Stop button end an answer that is being
 * written (the model request is aborted, the chat shows "stopped"), /reset makes the next
 * model request start from nothing.
 */
import { describe, expect } from "vitest";
import { privateChat, type FakeChat, type FakeUser } from "../fakes/telegram-server.js";
import { paced, textAnswer } from "../fakes/openai-server.js";
import { STOP_CALLBACK_DATA } from "../../src/bots/telegram/telegram-reply-port.js";
import {
  afterReading,
  callsTo,
  expectNoFlood,
  MESSAGE_METHODS,
  responseEnd,
  sentHistory,
  within,
} from "./telegram-harness.js";
import { e2eTest } from "../support/fixtures.js";

const alice: FakeUser = { id: 1001, first_name: "Alice" };
const bob: FakeUser = { id: 1002, first_name: "Bob" };

/** A story that takes the fake model ~20 s to write: long enough that only a stop ends it early. */
const LONG_STORY = Array.from(
  { length: 30 },
  (_, i) => `Once upon a time, in chapter ${i + 1}, a small robot learned something new.`,
).join(" ");

describe("Telegram commands, end to end", () => {
  e2eTest(
    "/stop ends the answer being written; /reset makes the next question start from nothing",
    async ({ startTelegram }) => {
      const e2e = await startTelegram();
      const { tg, model } = e2e;
      model.script([
        paced(textAnswer(LONG_STORY), 20),
        textAnswer("I was telling you a story about a robot."),
        textAnswer("Hello! How can I help?"),
      ]);
      const chat = privateChat(alice);

      const { message: asked } = tg.userSays(chat, alice, "Tell me a long story.");
      const story = await tg.waitFor(() => model.requests[0], { what: "the story request" });
      const storyEnd = responseEnd(story);
      await tg.waitFor(() => tg.draft(alice.id)?.text.startsWith("Once upon a time"), {
        timeoutMs: 5000,
        what: "the story streaming",
      });
      const stopAt = Date.now();
      const { message: stop } = tg.userSays(chat, alice, "/stop");

      // The model request is abandoned at once, and the chat keeps what was written, marked as stopped.
      const ended = await within(storyEnd, 3000, "the model request ending after /stop");
      expect(ended.outcome).toBe("client-closed");
      const stopped = await tg.waitFor(
        () => tg.botMessages(alice.id).find((m) => m.text.startsWith("Once upon a time")),
        {
          timeoutMs: 5000,
          what: "the stopped answer",
        },
      );
      expect(stopped.text).toMatch(/⏹ stopped$/);
      expect(stopped.replyToMessageId).toBe(asked.message_id);
      expect(stopped.text.length).toBeLessThan(LONG_STORY.length / 2);
      expect(stopped.sentAt - stopAt).toBeLessThan(4000);
      // That note is the acknowledgement: no second message (it would break the chat's 1/s budget).
      expect(tg.botMessages(alice.id).map((m) => m.messageId)).toEqual([stopped.messageId]);
      expect(tg.messages(alice.id).filter((m) => m.replyToMessageId === stop.message_id)).toEqual([]);
      expect(tg.draft(alice.id)).toBeUndefined();

      // The stopped turn stays in the conversation...
      tg.userSays(chat, alice, "What were you telling me?");
      await tg.waitFor(() => tg.visibleText(alice.id).includes("a story about a robot"), {
        timeoutMs: 5000,
        what: "the second answer",
      });
      const before = sentHistory(model.requests[1]);
      expect(before[0]).toEqual({ role: "user", content: "Tell me a long story." });
      // What is stored is the part of the story the user saw, marked as stopped.
      expect(before[1]?.role).toBe("assistant");
      expect(before[1]?.content).toMatch(/^Once upon a time[\s\S]* … \(stopped by the user\)$/);
      expect((before[1]?.content ?? "").length).toBeLessThan(LONG_STORY.length);
      expect(before.at(-1)).toEqual({ role: "user", content: "What were you telling me?" });

      // ...until /reset: the next request carries nothing but the new question.
      await afterReading(tg, alice.id);
      const { message: reset } = tg.userSays(chat, alice, "/reset");
      const resetAck = await tg.waitFor(
        () => tg.botMessages(alice.id).find((m) => m.replyToMessageId === reset.message_id),
        { what: "the /reset answer" },
      );
      expect(resetAck.text).toBe(
        "🧹 Done: I forgot this conversation. Its settings stay (/settings reset restores the defaults).",
      );
      await afterReading(tg, alice.id);
      tg.userSays(chat, alice, "Hello?");
      await tg.waitFor(() => tg.visibleText(alice.id).includes("How can I help?"), {
        timeoutMs: 5000,
        what: "the answer after /reset",
      });
      expect(sentHistory(model.requests[2])).toEqual([{ role: "user", content: "Hello?" }]);
      expect(model.requests).toHaveLength(3);
      expectNoFlood(tg);
    },
  );

  e2eTest("the Stop button under a streaming group answer works like /stop", async ({ startTelegram }) => {
    const e2e = await startTelegram();
    const { tg, model } = e2e;
    const group: FakeChat = { id: -1002222222222, type: "supergroup", title: "Book club" };
    model.script([paced(textAnswer(LONG_STORY), 20)]);

    const { message: asked } = tg.userSays(group, alice, "@test_bot tell us a long story");
    const story = await tg.waitFor(() => model.requests[0], { what: "the story request" });
    const storyEnd = responseEnd(story);
    // The placeholder carries the Stop button while the answer is being written.
    const streaming = await tg.waitFor(() => tg.botMessages(group.id)[0], { what: "the placeholder" });
    expect(streaming.buttons).toEqual([[{ text: "⏹ Stop", callback_data: STOP_CALLBACK_DATA }]]);
    // Bob (anyone in the group) presses it once some words are on their way.
    await tg.waitFor(() => Date.now() - story.receivedAt > 500);
    const { queryId } = tg.userPresses(group.id, bob, streaming.messageId, STOP_CALLBACK_DATA);

    expect(await tg.waitFor(() => tg.callbackAnswer(queryId), { what: "the button's answer" })).toEqual({
      text: "⏹ Stopping…",
    });
    const ended = await within(storyEnd, 3000, "the model request ending after the Stop button");
    expect(ended.outcome).toBe("client-closed");
    const final = await tg.waitFor(() => tg.botMessages(group.id).find((m) => /⏹ stopped$/.test(m.text)), {
      timeoutMs: 5000,
      what: "the stopped answer",
    });
    // Same message, now final: what was written so far, the stopped note, no button; nothing else was posted.
    expect(final.messageId).toBe(streaming.messageId);
    expect(final.replyToMessageId).toBe(asked.message_id);
    expect(final.text).toMatch(/^Once upon a time[\s\S]*⏹ stopped$/);
    expect(final.buttons).toBeUndefined();
    expect(tg.botMessages(group.id)).toHaveLength(1);
    expect(callsTo(tg, group.id, MESSAGE_METHODS).every((c) => c.ok)).toBe(true);
    expectNoFlood(tg);
  });
});
