/**
 * Telegram platform faults end to end (fake Bot API in strict flood mode, fake model, real
 * Redis, bots + worker roles in-process): a 429 storm on sends and edits is waited out to
 * the second and the final text lands; an update delivered twice (also across an adapter
 * restart) is answered once.
 */
import { describe, expect } from "vitest";
import { privateChat, type FakeChat, type FakeUser } from "../fakes/telegram-server.js";
import { paced, textAnswer } from "../fakes/openai-server.js";
import { arrivalsAt, callsTo, expectNoFlood, MESSAGE_METHODS, sentHistory } from "./telegram-harness.js";
import { e2eTest } from "../support/fixtures.js";

const alice: FakeUser = { id: 1001, first_name: "Alice" };

describe("Telegram faults, end to end", () => {
  e2eTest(
    "waits out a 429 storm on drafts, sends and edits, never early, and every final text lands",
    async ({ startTelegram }) => {
      const e2e = await startTelegram();
      const { tg, model } = e2e;
      const group: FakeChat = { id: -1001111111111, type: "supergroup", title: "Ops" };
      const inGroup = "The deploy finished at 14:02, all **three** regions are healthy and the queue is empty again.";
      const inPrivate = "Your backup ran at 03:00 and took **eleven** minutes; nothing needs your attention.";
      // ~3 s of writing each: both answers are still growing when the storm hits.
      model.setHandler((request) =>
        paced(textAnswer(JSON.stringify(request.body.messages).includes("deploy") ? inGroup : inPrivate), 6),
      );
      // Each retry_after is longer than the chat's own pacing (3.1 s in groups, 1.1 s in private chats),
      // so a bot that only paced, without honouring the 429, would come back too early.
      tg.failNext("editMessageText", 1, { retryAfter: 4 });
      tg.failNext("sendMessageDraft", 1, { retryAfter: 3 });

      const { message: groupAsks } = tg.userSays(group, alice, "@test_bot how did the deploy go?");
      const { message: privateAsks } = tg.userSays(privateChat(alice), alice, "did my backup run?");
      // The group's placeholder is out: the next sendMessage is the private chat's answer, refused once too.
      await tg.waitFor(() => tg.botMessages(group.id)[0], { what: "the group placeholder" });
      tg.failNext("sendMessage", 1, { retryAfter: 3 });

      const groupText = "The deploy finished at 14:02, all three regions are healthy and the queue is empty again.";
      const privateText = "Your backup ran at 03:00 and took eleven minutes; nothing needs your attention.";
      await tg.waitFor(() => tg.visibleText(group.id) === groupText && tg.visibleText(alice.id) === privateText, {
        timeoutMs: 12_000,
        what: "both final texts",
      });

      // Each user sees one message with the whole answer, replying to the question, no Stop button left.
      expect(
        tg.botMessages(group.id).map((m) => ({ text: m.text, replyTo: m.replyToMessageId, buttons: m.buttons })),
      ).toEqual([{ text: groupText, replyTo: groupAsks.message_id, buttons: undefined }]);
      expect(tg.botMessages(alice.id).map((m) => ({ text: m.text, replyTo: m.replyToMessageId }))).toEqual([
        { text: privateText, replyTo: privateAsks.message_id },
      ]);
      expect(tg.botMessages(group.id)[0]!.entities).toEqual([
        { type: "bold", offset: groupText.indexOf("three"), length: 5 },
      ]);
      expect(tg.draft(alice.id)).toBeUndefined();

      // The storm happened, and every refusal was honoured: nothing reached that chat before retry_after was over.
      const chatMethods = [...MESSAGE_METHODS, "sendMessageDraft"];
      const refusals = [group.id, alice.id].flatMap((chatId) =>
        callsTo(tg, chatId, chatMethods)
          .filter((c) => c.status === 429)
          .map((c) => ({ chatId, call: c })),
      );
      expect(refusals.map((r) => r.call.method).sort()).toEqual(["editMessageText", "sendMessage", "sendMessageDraft"]);
      for (const { chatId, call } of refusals) {
        const retryAfterMs = Number(/retry after (\d+)/.exec(call.description ?? "")?.[1]) * 1000;
        expect(retryAfterMs).toBeGreaterThanOrEqual(3000);
        // (The refused request's own arrival shares its params object with the recorded answer.)
        const later = arrivalsAt(tg, chatId, chatMethods).filter((r) => r.at >= call.at && r.params !== call.params);
        expect(later.length, `a request after the ${call.method} 429`).toBeGreaterThan(0);
        expect(later[0]!.at - call.at, `wait after the ${call.method} 429`).toBeGreaterThanOrEqual(retryAfterMs);
      }
      // The fake's own flood control saw nothing wrong, and the model was asked once per question.
      expectNoFlood(tg);
      expect(model.requests).toHaveLength(2);
    },
  );

  e2eTest(
    "answers an update delivered twice only once, also when it comes again after an adapter restart",
    async ({ startTelegram, startStack }) => {
      // The worker runs on its own; adapters come and go on the same deployment.
      const e2e = await startTelegram({ roles: ["worker"] });
      const { tg, model } = e2e;
      const startAdapter = async () => {
        const bots = await startStack({ env: e2e.env, roles: ["bots"], redis: e2e.stack.redis });
        await tg.waitFor(() => tg.isLongPolling(), { what: "the adapter to poll" });
        return bots;
      };
      model.script([textAnswer("Hello Alice!"), textAnswer("You said hello.")]);

      const first = await startAdapter();
      const { message: hello } = tg.userSays(privateChat(alice), alice, "hello");
      // Delivered again while the first copy is being answered (e.g. a webhook retry).
      tg.pushUpdate({ message: hello });
      await tg.waitFor(() => tg.botMessages(alice.id)[0]?.text === "Hello Alice!", {
        timeoutMs: 8000,
        what: "the first answer",
      });

      // The adapter restarts and Telegram delivers the same message once more.
      await first.close();
      await startAdapter();
      tg.pushUpdate({ message: hello });
      // A later question: the conversation is answered in order, so a duplicate job would have run before it.
      const { message: next } = tg.userSays(privateChat(alice), alice, "what did I say?");
      await tg.waitFor(() => tg.botMessages(alice.id).some((m) => m.text === "You said hello."), {
        timeoutMs: 8000,
        what: "the second answer",
      });

      expect(tg.pendingUpdateIds()).toEqual([]);
      expect(model.requests).toHaveLength(2);
      expect(sentHistory(model.requests[1])).toEqual([
        { role: "user", content: "hello" },
        { role: "assistant", content: "Hello Alice!" },
        { role: "user", content: "what did I say?" },
      ]);
      expect(tg.botMessages(alice.id).map((m) => ({ text: m.text, replyTo: m.replyToMessageId }))).toEqual([
        { text: "Hello Alice!", replyTo: hello.message_id },
        { text: "You said hello.", replyTo: next.message_id },
      ]);
      expectNoFlood(tg);
    },
  );
});
