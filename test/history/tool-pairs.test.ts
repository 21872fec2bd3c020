import { describe, expect, it } from "vitest";
import type { ChatMessage } from "../../src/contracts/chat-message.js";
import { estimateMessageTokens, estimateTextTokens } from "../../src/tokens/token-estimate.js";
import { repairToolPairs } from "../../src/history/tool-pairs.js";

const calls = (...ids: string[]): ChatMessage => ({
  role: "assistant",
  content: "",
  tool_calls: ids.map((id) => ({ id, type: "function" as const, function: { name: "get_time", arguments: "{}" } })),
});
const result = (id: string): ChatMessage => ({ role: "tool", tool_call_id: id, content: "ok" });

describe("repairToolPairs", () => {
  it("keeps complete groups, parallel results in any order", () => {
    const history: ChatMessage[] = [
      { role: "user", content: "q" },
      calls("a", "b"),
      result("b"),
      result("a"),
      { role: "assistant", content: "done" },
    ];
    expect(repairToolPairs(history)).toEqual(history);
  });

  it("drops a group whose results are incomplete, and results nobody asked for", () => {
    const history: ChatMessage[] = [
      result("x"),
      { role: "user", content: "q" },
      calls("a", "b"),
      result("a"),
      { role: "user", content: "next" },
      calls("c"),
      result("c"),
      result("stray"),
      result("c"),
    ];
    expect(repairToolPairs(history)).toEqual([
      { role: "user", content: "q" },
      { role: "user", content: "next" },
      calls("c"),
      result("c"),
    ]);
  });
});

describe("token estimate", () => {
  it("counts CJK about one token per character and Latin about four characters a token", () => {
    expect(estimateTextTokens("北京天气")).toBe(4);
    expect(estimateTextTokens("abcdefgh")).toBe(2);
    expect(estimateMessageTokens({ role: "user", content: "abcd", name: "Al" })).toBe(4 + 1 + 1);
  });
});
