import { describe, expect, it } from "vitest";
import { answerDeltaCount, answerText, findConversationTag, questionText } from "./model-script.js";

describe("the benchmark's model script", () => {
  it("streams an answer of N words as exactly N deltas", () => {
    expect(answerDeltaCount(300)).toBe(300);
    expect(answerText(51)).toMatch(/^w1 w2 .* w50\n\nw51$/s);
  });

  it("tags each question with its conversation", () => {
    expect(
      findConversationTag(JSON.stringify({ messages: [{ role: "user", content: `Alice: ${questionText(42)}` }] })),
    ).toBe(42);
    expect(findConversationTag("no tag here")).toBeUndefined();
  });
});
