/** Which stored messages a request carries: the newest that fit, tool pairs whole, starting at a user message when one fits. */
import { describe, expect, it } from "vitest";
import type { ChatMessage } from "../../src/contracts/chat-message.js";
import { fitHistory, type CountedMessage } from "../../src/history/fit-history.js";

const counted = (message: ChatMessage, tokens: number): CountedMessage => ({ message, tokens });
const u = (content: string, tokens = 10) => counted({ role: "user", content }, tokens);
const a = (content: string, tokens = 10) => counted({ role: "assistant", content }, tokens);
const call = (id: string, tokens = 10) =>
  counted(
    {
      role: "assistant",
      content: "",
      tool_calls: [{ id, type: "function", function: { name: "get_time", arguments: "{}" } }],
    },
    tokens,
  );
const result = (id: string, tokens = 10) => counted({ role: "tool", tool_call_id: id, content: "12:00" }, tokens);

const contents = (kept: CountedMessage[]) => kept.map((m) => m.message.content || m.message.role);

describe("fitting history into a budget", () => {
  it("keeps everything that fits", () => {
    const history = [u("q1"), a("a1"), u("q2"), a("a2")];
    expect(fitHistory(history, 40)).toMatchObject({ dropped: [], keptTokens: 40 });
  });

  it("keeps the newest whole exchanges, starting at a user message", () => {
    const history = [u("q1"), a("a1"), u("q2"), a("a2"), u("q3"), a("a3")];
    const fitted = fitHistory(history, 35);
    expect(contents(fitted.kept)).toEqual(["q3", "a3"]);
    expect(contents(fitted.dropped)).toEqual(["q1", "a1", "q2", "a2"]);
    expect(fitted.keptTokens).toBe(20);
  });

  it("never starts at a tool result: a call and its results stay together or go together", () => {
    const history = [u("q1"), call("c1"), result("c1", 30), a("a1"), u("q2", 5), a("a2", 5)];
    // 50 tokens reach back to the tool result, which cannot start a history: the cut falls at q2.
    expect(contents(fitHistory(history, 50).kept)).toEqual(["q2", "a2"]);
    // With room for the whole tool exchange, it is kept whole.
    expect(contents(fitHistory(history, 70).kept)).toEqual(["q1", "assistant", "12:00", "a1", "q2", "a2"]);
  });

  it("falls back to an assistant start when no user message fits, and to nothing when nothing does", () => {
    const history = [u("long question", 100), a("answer", 10)];
    expect(contents(fitHistory(history, 20).kept)).toEqual(["answer"]);
    expect(fitHistory(history, 5)).toMatchObject({ kept: [], keptTokens: 0 });
  });
});
