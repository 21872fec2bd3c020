/**
 * The Discord reply port under the real streaming engine (src/reply), against the fake
 * Discord: a long answer arrives as several messages within the limit, code fences balanced,
 * no one pinged, no rate-limit violation, and the Stop button gone once the answer is done.
 * The fake's bucket is scaled down (5 writes per 250 ms) so pacing runs in real time quickly;
 * the port learns that figure from the headers like it would learn Discord's.
 */
import { afterEach, expect, test } from "vitest";
import type { AgentEvent } from "../../../src/contracts/agent-events.js";
import { createDiscordReplyPortFactory } from "../../../src/bots/discord/discord-reply-port.js";
import { createDiscordRestClient } from "../../../src/bots/discord/discord-rest-client.js";
import { createLocalRateGate } from "../../../src/reply/rate-gate.js";
import { createMemoryReplyJournal } from "../../../src/contracts/reply-journal.js";
import { streamReply } from "../../../src/reply/reply-stream.js";
import type { InboundMessage } from "../../../src/contracts/inbound-message.js";
import { startFakeDiscord, type FakeDiscord } from "../../fakes/discord-server.js";
import { inboundMessage } from "../../support/inbound-message.js";

let discord: FakeDiscord;

afterEach(async () => {
  await discord.close();
});

/** The model's answer arriving in small deltas, then the finish event. */
async function* answer(text: string, chunk = 150): AsyncGenerator<AgentEvent> {
  for (let i = 0; i < text.length; i += chunk) {
    yield { type: "text-delta", round: 1, text: text.slice(i, i + chunk) };
    await new Promise((resolve) => setImmediate(resolve)); // deltas arrive as separate turns of the event loop
  }
  yield { type: "round-finish", round: 1, reason: "stop" };
  yield { type: "finish", reason: "stop", text, messages: [{ role: "assistant", content: text }], rounds: 1 };
}

const fencesBalanced = (text: string): boolean => (text.match(/^ {0,3}```/gm) ?? []).length % 2 === 0;

test("a 6000-character answer with code and @everyone lands as ≥3 paced messages, each ≤2000, fences balanced, pinging no one", async () => {
  discord = await startFakeDiscord({ messageWriteLimit: { limit: 5, windowMs: 250 } });
  const channelId = discord.ids.general;
  const said = discord.userSays({ channelId, content: "explain everything", mentionsBot: true });
  const message: InboundMessage = inboundMessage({
    platform: "discord",
    chatId: channelId,
    messageId: said.id,
    chatType: "group",
    guildId: discord.ids.guild,
    author: { id: discord.users.alice.id, displayName: "Alice" },
    text: "explain everything",
  });
  const paragraph = (i: number) => `Paragraph ${i}: ${"lorem ipsum dolor sit amet ".repeat(12).trim()}.`;
  const code = [
    "```ts",
    ...Array.from({ length: 60 }, (_, i) => `const value${i} = ${i} * 2; // line ${i}`),
    "```",
  ].join("\n");
  const text = [
    "@everyone here is the whole story.",
    ...Array.from({ length: 8 }, (_, i) => paragraph(i)),
    code,
    ...Array.from({ length: 8 }, (_, i) => paragraph(i + 8)),
  ].join("\n\n");
  expect(text.length).toBeGreaterThan(6000);

  const factory = createDiscordReplyPortFactory({
    rest: createDiscordRestClient({ token: discord.token, apiBase: discord.apiBase }),
    defaultEditIntervalMs: 50,
  });
  const port = factory(message);
  const gate = createLocalRateGate({ minIntervalMs: () => port.limits.minEditIntervalMs });
  const result = await streamReply({
    port,
    chatKey: message.conversationKey,
    events: answer(text),
    journal: createMemoryReplyJournal(),
    showReasoning: "off",
    gate,
  });

  const shown = discord.botMessages(channelId);
  expect(shown.length).toBeGreaterThanOrEqual(3);
  expect(result.messageIds).toEqual(shown.map((m) => m.id));
  for (const m of shown) {
    expect([...m.content].length).toBeLessThanOrEqual(2000);
    expect(fencesBalanced(m.content)).toBe(true);
    expect(m.components).toEqual([]); // the Stop button is gone once the answer is complete
  }
  expect(shown[0]?.message_reference?.message_id).toBe(said.id);
  expect(shown.slice(1).every((m) => m.message_reference === undefined)).toBe(true);
  expect(shown.map((m) => m.content).join("\n")).toContain("Paragraph 15");
  expect(discord.violations).toEqual([]);
  expect(discord.pings.filter((p) => p.authorId === discord.bot.id)).toEqual([]);
  expect(discord.typing.length).toBeGreaterThanOrEqual(1);
  // While streaming, the message offered the Stop button.
  expect(discord.requests.some((r) => JSON.stringify(r.body?.components ?? []).includes('"custom_id":"stop"'))).toBe(
    true,
  );
  expect(port.limits.minEditIntervalMs).toBe(50);
});
