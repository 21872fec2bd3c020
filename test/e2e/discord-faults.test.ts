/**
 * Discord end to end when Discord pushes back: a 429 on an edit is waited out for exactly its
 * retry_after (no request in between, the newest text sent after it), and a 429 or a 5xx on
 * the final edit is retried until the final text lands, in the same message, with no duplicate.
 */
import { describe, expect } from "vitest";
import { paced, textAnswer } from "../fakes/openai-server.js";
import { botAnswer, writesTo } from "./discord-harness.js";
import { e2eTest } from "../support/fixtures.js";

const EDIT = "PATCH /channels/:id/messages/:id";

describe("Discord: rate limits and server errors on edits", () => {
  e2eTest(
    "a 429 on an edit mid-stream is waited out for its retry_after, then the newest text and the final text land",
    async ({ startDiscord }) => {
      const e2e = await startDiscord({ discord: { messageWriteLimit: { limit: 5, windowMs: 1000 } } });
      const { discord, model } = e2e;
      const channelId = discord.ids.general;
      const answer = `${Array.from({ length: 40 }, (_, i) => `token${i}`).join(" ")} — done.`;
      model.script([paced(textAnswer(answer), 20)]);
      discord.failNext({ route: EDIT, channelId, status: 429, retryAfterMs: 1200 });
      discord.userSays({ channelId, content: "stream something long", mentionsBot: true });

      const final = await botAnswer(discord, channelId, (c) => c.includes("— done."), { timeoutMs: 10_000 });
      expect(final.content).toBe(answer);
      expect(discord.botMessages(channelId)).toHaveLength(1);

      const writes = writesTo(discord, channelId);
      const limited = writes.findIndex((w) => w.status === 429);
      expect(limited).toBeGreaterThan(0);
      const refused = writes[limited]!;
      const next = writes[limited + 1]!;
      // Nothing was sent into the channel until retry_after had passed (a few ms of clock granularity allowed).
      expect(next.at - refused.at).toBeGreaterThanOrEqual(1190);
      // After the wait the bot sent what the model had written by then, not the stale text that was refused.
      expect(String(next.body?.content).length).toBeGreaterThan(String(refused.body?.content).length);
      expect(writes.slice(limited + 1).every((w) => w.status === 200)).toBe(true);
      expect(discord.violations).toEqual([]);
    },
  );

  e2eTest(
    "a 429 and then a 502 on the final edit are retried until the final text lands in the same message",
    async ({ startDiscord }) => {
      const e2e = await startDiscord({ discord: { messageWriteLimit: { limit: 5, windowMs: 1000 } } });
      const { discord, model } = e2e;
      const channelId = discord.ids.random;
      const answer = "The final answer is forty-two.";
      // The model thinks before answering, so the placeholder is out first and the answer's only edit is the final one.
      model.script([{ ...textAnswer(answer), headerDelayMs: 400 }]);
      discord.failNext({ route: EDIT, channelId, status: 429, retryAfterMs: 700 });
      discord.failNext({ route: EDIT, channelId, status: 502 });
      const asked = discord.userSays({ channelId, content: "what is the answer?", mentionsBot: true });

      const final = await botAnswer(discord, channelId, (c) => c === answer, { timeoutMs: 10_000 });
      expect(final.message_reference?.message_id).toBe(asked.id);
      expect(discord.botMessages(channelId)).toHaveLength(1);

      const edits = writesTo(discord, channelId).filter((w) => w.method === "PATCH");
      expect(edits.map((e) => e.status)).toEqual([429, 502, 200]);
      expect(edits.every((e) => e.messageId === final.id && e.body?.content === answer)).toBe(true);
      // Each retry came after the wait it was owed: retry_after for the 429, a backoff for the 502.
      expect(edits[1]!.at - edits[0]!.at).toBeGreaterThanOrEqual(690);
      expect(edits[2]!.at - edits[1]!.at).toBeGreaterThanOrEqual(400);
      expect(discord.violations).toEqual([]);
    },
  );
});
