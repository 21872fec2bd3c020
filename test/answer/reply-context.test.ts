/**
 * A reply carries the text of the message it answers: briefly when that message is in the
 * history (the quote only says which one is meant), at more length when the history does not
 * have it (older, or from before the bot joined), since then the quote is the model's only copy.
 */
import { afterEach, describe, expect, it } from "vitest";
import { textAnswer } from "../fakes/openai-server.js";
import { startMemoryHarness, type MemoryHarness } from "./memory-harness.js";

let h: MemoryHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const lastUserContent = (harness: MemoryHarness): string =>
  String(harness.model.requests.at(-1)?.body.messages?.at(-1)?.content);

describe("reply context", () => {
  it("quotes a message the history lacks at length, and one it has briefly", async () => {
    h = await startMemoryHarness({ handler: () => textAnswer("Understood.") });
    const announcement =
      `Meeting notes: ${"the budget for the trip is 1200 euros and we leave on the 3rd of May. ".repeat(12)}`.trim();
    expect(announcement.length).toBeGreaterThan(800);

    // Bob's announcement was posted before the bot joined: only the reply can carry it.
    await h.ask("What is the budget?", {
      author: "Alice",
      chatType: "group",
      replyTo: { messageId: "9", authorName: "Bob", text: announcement },
    });
    const quotedAtLength = lastUserContent(h);
    expect(quotedAtLength).toContain(`Alice: (replying to Bob: "${announcement.slice(0, 800)}`);
    expect(quotedAtLength.length).toBeGreaterThan(800);

    // A reply to the bot's own answer, which the history holds: a short quote is enough.
    const answer = `Understood. ${"This answer is long enough to be cut when it is quoted again. ".repeat(10)}`;
    await h.history.append("dc:100", [
      { role: "user", content: "Alice: say something long" },
      { role: "assistant", content: answer },
    ]);
    await h.ask("Why?", {
      author: "Alice",
      chatType: "group",
      replyTo: { messageId: "10", authorName: "Test Bot", text: answer },
    });
    const quotedBriefly = lastUserContent(h);
    expect(quotedBriefly).toMatch(/^Alice: \(replying to Test Bot: ".{300}…"\)\nWhy\?$/s);
  });
});
