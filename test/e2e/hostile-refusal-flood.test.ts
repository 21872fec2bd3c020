/**
 * Floods that only earn refusals: an outsider writing to a private bot, and a user sending
 * over-long messages or unknown commands. Every refusal takes a slot of the bot-wide Telegram send
 * budget, so a flooder could delay every other chat's answers; refusals pass the per-user limit, and
 * an outsider hears "private" at most once a minute.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect } from "vitest";
import { privateChat, type FakeUser } from "../fakes/telegram-server.js";
import { startHostileRig } from "../security/hostile-kit.js";
import { e2eTest } from "../support/fixtures.js";

const member: FakeUser = { id: 4001, first_name: "Member" };
const outsider: FakeUser = { id: 4002, first_name: "Outsider" };

/** Counts per wall-clock minute: keep a burst from straddling two minutes. */
async function awayFromMinuteBoundary(): Promise<void> {
  const intoMinute = Date.now() % 60_000;
  // Kept sleep: the roles count on the real clock, which a test cannot move.
  if (intoMinute > 50_000) await sleep(60_000 - intoMinute + 50);
}

describe("refusal floods, Telegram", () => {
  e2eTest(
    "an outsider's ten messages get one 'private' refusal, and none reaches the model",
    async ({ closeAfter }) => {
      const rig = closeAfter(
        await startHostileRig({ platform: "telegram", env: { TELEGRAM_ALLOWED_USERS: String(member.id) } }),
      );
      const tg = rig.tg!;
      await awayFromMinuteBoundary();
      for (let i = 0; i < 10; i++) tg.userSays(privateChat(outsider), outsider, `let me in ${i}`);
      await tg.waitFor(() => tg.pendingUpdateIds().length === 0, { what: "every update handled" });
      // Courtesy replies run on their own after the update is handled, paced about one a second.
      await tg.waitFor(() => tg.botMessages(outsider.id).length >= 1, { what: "the first refusal" });
      // Kept sleep: a second refusal would come about a second after the first, and nothing later in this chat
      // can come first (every other reply in it is refused too); so the test gives it two and a half.
      await sleep(2500);
      const refusals = tg.botMessages(outsider.id).filter((m) => m.text.includes("this bot is private"));
      expect(refusals).toHaveLength(1);
      expect(rig.model.requests).toEqual([]);
    },
  );

  e2eTest(
    "over-long messages and unknown commands past USER_RATE_LIMIT get no more replies",
    async ({ closeAfter }) => {
      const rig = closeAfter(
        await startHostileRig({ platform: "telegram", env: { USER_RATE_LIMIT: "3", MAX_INPUT_CHARS: "20" } }),
      );
      const tg = rig.tg!;
      await awayFromMinuteBoundary();
      for (let i = 0; i < 4; i++)
        tg.userSays(privateChat(member), member, `this message is much too long for the bot ${i}`);
      for (let i = 0; i < 4; i++) tg.userSays(privateChat(member), member, `/nosuchcommand${i}`);
      await tg.waitFor(() => tg.pendingUpdateIds().length === 0, { what: "every update handled" });
      // Private-chat pacing sends about one a second: wait for three, then long enough for more to show.
      await tg.waitFor(() => tg.botMessages(member.id).length >= 3, { what: "three refusals" });
      // Kept sleep: past the limit nothing more is sent in this chat this minute, so no later reply can mark the
      // moment; a fourth would come about a second after the third.
      await sleep(2500);
      const replies = tg.botMessages(member.id).map((m) => m.text);
      expect(replies).toHaveLength(3);
      expect(replies.every((t) => t.startsWith("Sorry, that message is too long"))).toBe(true);
      expect(rig.model.requests).toEqual([]);
    },
  );
});
