/**
 * Telegram private chats end to end (fake Bot API in strict flood mode, fake model, real
 * Redis, bots + worker roles in-process): the answer streams as drafts while the model
 * writes and lands as one message; a long answer is split into messages that each
 * parse and fit; a model that stays down ends in the "unavailable" line.
 */
import { describe, expect } from "vitest";
import type { MessageEntity } from "grammy/types";
import { privateChat, type FakeUser } from "../fakes/telegram-server.js";
import { paced, textAnswer, unavailable } from "../fakes/openai-server.js";
import { parseTelegramHtml } from "../fakes/telegram-html.js";
import { markdownToTelegramHtml } from "../../src/bots/telegram/telegram-html.js";
import { modelUnavailableLine } from "../../src/reply/reply-view.js";
import {
  arrivalsAt,
  callsTo,
  expectNoFlood,
  MESSAGE_METHODS,
  responseEnd,
  sentHistory,
  smallestGapMs,
} from "./telegram-harness.js";
import { e2eTest } from "../support/fixtures.js";
import { waitUntilQueueDrained } from "../support/queue-drained.js";

const alice: FakeUser = { id: 1001, first_name: "Alice", language_code: "en" };

describe("Telegram private chat, end to end", () => {
  e2eTest(
    "streams drafts while the model writes, then keeps one message with the rendered answer",
    async ({ startTelegram }) => {
      const e2e = await startTelegram();
      const { tg, model } = e2e;
      const answer =
        "Here is the plan: **install** the dependencies with `npm ci`, run the whole test suite, " +
        "then **build** the bundle with `npm run build` and start the bot with `npm start`.";
      // 48 tokens at 14 tokens/s (a small local model on a laptop CPU): ~3.4 s of writing.
      model.script([paced(textAnswer(answer), 14)]);

      const { message: asked } = tg.userSays(privateChat(alice), alice, "How do I get this running?");
      const request = await tg.waitFor(() => model.requests[0], { what: "the model request" });
      const ended = responseEnd(request);
      const sent = await tg.waitFor(() => tg.botMessages(alice.id)[0], {
        timeoutMs: 10_000,
        what: "the answer message",
      });
      const { at: modelDoneAt } = await ended;

      // What the model was sent: the system prompt, then exactly the user's words (no name in a private chat).
      expect(sentHistory(request)).toEqual([{ role: "user", content: "How do I get this running?" }]);
      expect(request.body.stream).toBe(true);

      // The final message: exactly the rendered answer, bold and code as entities, replying to the question.
      const expected = parseTelegramHtml(markdownToTelegramHtml(answer));
      expect(sent.text).toBe(
        "Here is the plan: install the dependencies with npm ci, run the whole test suite, " +
          "then build the bundle with npm run build and start the bot with npm start.",
      );
      expect(sent.parseMode).toBe("HTML");
      expect(sent.entities).toEqual(expected.entities);
      const styled = (e: MessageEntity) => `${e.type}:${sent.text.slice(e.offset, e.offset + e.length)}`;
      expect(sent.entities.map(styled)).toEqual([
        "bold:install",
        "code:npm ci",
        "bold:build",
        "code:npm run build",
        "code:npm start",
      ]);
      expect(sent.replyToMessageId).toBe(asked.message_id);
      expect(sent.editCount).toBe(0);
      expect(sent.buttons).toBeUndefined();
      // Exactly one message, and the draft is gone once it is there.
      await tg.waitFor(() => tg.draft(alice.id) === undefined, { what: "the draft to be gone" });
      expect(tg.botMessages(alice.id)).toHaveLength(1);

      // Drafts streamed while the model was still writing, each showing more of the answer.
      const drafts = callsTo(tg, alice.id, ["sendMessageDraft"]);
      expect(drafts.every((d) => d.ok)).toBe(true);
      const visible = drafts.map((d) => parseTelegramHtml(String(d.params.text ?? "")).text);
      const writing = drafts.filter((d, i) => d.at < modelDoneAt && visible[i] !== "…" && visible[i] !== "");
      expect(writing.length, `drafts while writing: ${JSON.stringify(visible)}`).toBeGreaterThanOrEqual(2);
      for (let i = 1; i < visible.length; i++) expect(visible[i]!.length).toBeGreaterThan(visible[i - 1]!.length);
      expect(new Set(drafts.map((d) => d.params.draft_id)).size).toBe(1);
      // The answer was kept with one sendMessage after the model finished; nothing was edited.
      const messageCalls = callsTo(tg, alice.id, MESSAGE_METHODS);
      expect(messageCalls.map((c) => c.method)).toEqual(["sendMessage"]);
      expect(messageCalls[0]!.at).toBeGreaterThanOrEqual(modelDoneAt);

      // Typing was shown before anything else reached the chat.
      const first = arrivalsAt(tg, alice.id, ["sendChatAction", "sendMessageDraft", "sendMessage"]);
      expect(first[0]).toMatchObject({ method: "sendChatAction", params: { action: "typing" } });
      // Drafts are previews paced on their own key (250 ms apart, give or take request latency), so the
      // words show up within a fraction of a second; messages keep Telegram's 1.1 s pace, and no flood.
      const draftArrivals = arrivalsAt(tg, alice.id, ["sendMessageDraft"]);
      const timeline = JSON.stringify(
        arrivalsAt(tg, alice.id, ["sendMessageDraft", "sendMessage"]).map((r) => [r.method, r.at - request.receivedAt]),
      );
      expect(smallestGapMs(draftArrivals), timeline).toBeGreaterThanOrEqual(200);
      const writingGaps = draftArrivals
        .filter((d) => d.at <= modelDoneAt)
        .map((d, i, all) => (i > 0 ? d.at - all[i - 1]!.at : 0));
      expect(Math.max(...writingGaps), timeline).toBeLessThanOrEqual(700);
      expect(smallestGapMs(arrivalsAt(tg, alice.id, MESSAGE_METHODS))).toBeGreaterThanOrEqual(900);
      expectNoFlood(tg);
    },
  );

  e2eTest(
    "splits a long answer with a code block into messages that each fit and parse, losing nothing",
    async ({ startTelegram }) => {
      const e2e = await startTelegram();
      const { tg, model } = e2e;
      const sentence = (i: number) =>
        `Step ${i} explains one more detail of the set-up, with **care** and a \`flag-${i}\` to remember.`;
      const paragraph = (from: number, n: number) => Array.from({ length: n }, (_, k) => sentence(from + k)).join(" ");
      const codeLines = Array.from(
        { length: 130 },
        (_, i) => `const value${String(i).padStart(3, "0")} = compute(${i}, "x < y && z");`,
      );
      const answer = [
        paragraph(1, 12),
        paragraph(13, 6),
        `\`\`\`ts\n${codeLines.join("\n")}\n\`\`\``,
        paragraph(19, 14),
        paragraph(33, 14),
      ].join("\n\n");
      model.script([textAnswer(answer)]);

      const { message: asked } = tg.userSays(privateChat(alice), alice, "Explain the whole set-up, with the code.");
      // The answer ends with step 46: wait until the message holding it is there.
      await tg.waitFor(() => tg.visibleText(alice.id).includes("Step 46 explains"), {
        timeoutMs: 12_000,
        what: "the end of the answer",
      });
      const messages = tg.botMessages(alice.id);
      const expected = parseTelegramHtml(markdownToTelegramHtml(answer));
      expect(expected.text.length).toBeGreaterThan(2 * 4096);

      expect(messages.length).toBeGreaterThanOrEqual(3);
      for (const m of messages) {
        // Telegram counts the parsed text; the fake refuses longer ones, this names the culprit.
        expect([...m.text].length, `message ${m.messageId}`).toBeLessThanOrEqual(4096);
        // Sent as HTML and accepted as such: not the plain-text fallback of a parse failure.
        expect(m.parseMode).toBe("HTML");
        expect(() => parseTelegramHtml(m.source ?? "")).not.toThrow();
      }
      // The first message answers the question; the continuations follow it.
      expect(messages.map((m) => m.replyToMessageId)).toEqual([
        asked.message_id,
        ...messages.slice(1).map(() => undefined),
      ]);

      // Nothing lost, nothing doubled: the texts together are the answer (cuts only drop whitespace).
      const squash = (t: string) => t.replace(/\s+/g, "");
      expect(squash(messages.map((m) => m.text).join(""))).toBe(squash(expected.text));
      // The code block was cut inside: closed in one message and reopened (same language) in the next,
      // and its lines, read across the messages, are the code exactly.
      const pres = messages.flatMap((m) => m.entities.filter((e) => e.type === "pre").map((e) => ({ m, e })));
      expect(pres.length).toBeGreaterThanOrEqual(2);
      expect(pres.every(({ e }) => (e as { language?: string }).language === "ts")).toBe(true);
      expect(new Set(pres.map(({ m }) => m.messageId)).size).toBe(pres.length);
      const codeRead = pres
        .map(({ m, e }) => m.text.slice(e.offset, e.offset + e.length).replace(/^\n+|\n+$/g, ""))
        .join("\n");
      expect(codeRead).toBe(codeLines.join("\n"));
      // Bold and inline code survive in every message (each piece was rendered whole, not cut mid-tag).
      for (const m of messages.filter((x) => x.text.includes("Step"))) {
        expect(m.entities.some((e) => e.type === "bold")).toBe(true);
      }

      // Sent one after another at Telegram's pace; never edited; no flood.
      const sends = arrivalsAt(tg, alice.id, MESSAGE_METHODS);
      expect(sends.map((c) => c.method)).toEqual(messages.map(() => "sendMessage"));
      expect(smallestGapMs(sends)).toBeGreaterThanOrEqual(900);
      expectNoFlood(tg);
      expect(model.requests).toHaveLength(1);
    },
  );

  e2eTest("says the model is unavailable, in one message, after every retry met a 503", async ({ startTelegram }) => {
    const e2e = await startTelegram({ worker: { queue: { backoffMs: 50, attempts: 3 } } });
    const { tg, model } = e2e;
    model.setHandler(() => unavailable());

    const { message: asked } = tg.userSays(privateChat(alice), alice, "Are you there?");
    const line = await tg.waitFor(() => tg.botMessages(alice.id)[0], {
      timeoutMs: 10_000,
      what: "the failure message",
    });
    expect(line.text).toBe(modelUnavailableLine());
    expect(line.replyToMessageId).toBe(asked.message_id);
    // The three attempts each asked the model once, with the same question; the user got one message.
    expect(model.requests.map((r) => sentHistory(r))).toEqual(
      Array.from({ length: 3 }, () => [{ role: "user", content: "Are you there?" }]),
    );
    // The job has given up: nothing is left to run that could write or ask again.
    await waitUntilQueueDrained(e2e.stack.redis);
    expect(tg.botMessages(alice.id)).toHaveLength(1);
    expect(model.requests).toHaveLength(3);
    expect(tg.draft(alice.id)).toBeUndefined();
    expectNoFlood(tg);
  });
});
