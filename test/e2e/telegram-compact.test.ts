/**
 * `/compact` end to end on Telegram (fake Bot API, fake llama.cpp model, real Redis, bots +
 * worker roles in-process): it folds the conversation's older turns into a summary written by
 * the model, says how much it kept, and the next question's request carries the summary as a
 * system note before the kept turns. `/reset` then clears summary and history.
 */
import { beforeAll, describe, expect, vi } from "vitest";
import { privateChat, type FakeUser } from "../fakes/telegram-server.js";
import { qwen3Encoder } from "../fakes/llama-extras.js";
import { textAnswer } from "../fakes/openai-server.js";
import { historyKeys } from "../../src/redis/keys.js";
import { sentMessages } from "./telegram-harness.js";
import { e2eTest } from "../support/fixtures.js";

const alice: FakeUser = { id: 1001, first_name: "Alice" };

describe("/compact on Telegram", () => {
  // Qwen3's vocabulary for the fake model's /tokenize, loaded outside the test's own timeout (see telegram-harness.ts).
  beforeAll(qwen3Encoder, 120_000);

  e2eTest(
    "folds older turns into a summary, says what it kept, and the next request carries it; /reset clears it",
    async ({ startTelegram }) => {
      const e2e = await startTelegram();
      const { tg, model } = e2e;
      const answers = ["Nice, a cat called Momo.", "Got it, you live in Lyon.", "Momo lives with you in Lyon."];
      model.setHandler((request) =>
        request.body.stream === true
          ? textAnswer(answers.shift() ?? "OK.")
          : textAnswer("Alice has a cat called Momo and lives in Lyon."),
      );
      const chat = privateChat(alice);
      const say = async (text: string, expectReply: string): Promise<void> => {
        const { message } = tg.userSays(chat, alice, text);
        await tg.waitFor(
          () =>
            tg
              .botMessages(alice.id)
              .find((m) => m.replyToMessageId === message.message_id && m.text.includes(expectReply)),
          {
            timeoutMs: 15_000,
            what: `the answer to "${text}"`,
          },
        );
      };
      await say("My cat is called Momo.", "Momo");
      await say("I live in Lyon.", "Lyon");
      // The turn is stored right after its answer is delivered; /compact does not wait in the queue, so wait for the store.
      const key = historyKeys(e2e.stack.config.KEY_PREFIX, `tg:${alice.id}`).list;
      await vi.waitFor(async () => expect(await e2e?.stack.redis.redis.llen(key)).toBe(4), { timeout: 15_000 });
      await say("/compact", "Done");

      const ack = tg.botMessages(alice.id).at(-1);
      expect(ack?.text).toMatch(
        /^🗜️ Done: 2 earlier messages are now a short summary \(\d+ tokens\); I kept the last 2 as they are \(\d+ tokens\)\.$/,
      );
      // The summary was one non-streamed request with thinking off.
      const fold = model.requests.find((r) => r.body.stream !== true);
      expect(fold?.body.chat_template_kwargs).toEqual({ enable_thinking: false });
      expect(fold?.body.messages?.at(-1)?.content).toContain(
        "User: My cat is called Momo.\nAssistant: Nice, a cat called Momo.",
      );

      await say("Where does my cat live?", "Momo lives");
      const last = model.requests.filter((r) => r.body.stream === true).at(-1);
      expect(sentMessages(last).slice(1)).toEqual([
        { role: "system", content: "Earlier in this conversation: Alice has a cat called Momo and lives in Lyon." },
        { role: "user", content: "I live in Lyon." },
        { role: "assistant", content: "Got it, you live in Lyon." },
        { role: "user", content: "Where does my cat live?" },
      ]);

      await say("/reset", "forgot");
      await say("/compact", "Nothing to compact");
      expect(tg.botMessages(alice.id).at(-1)?.text).toBe("Nothing to compact: this conversation is empty.");
    },
    // Seven turns, each waited on; a busy machine (one core taken by another process) needs more than the default.
    60_000,
  );
});
