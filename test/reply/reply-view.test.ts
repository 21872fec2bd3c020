import { describe, expect, it } from "vitest";
import type { AgentEvent } from "../../src/contracts/agent-events.js";
import {
  applyAgentEvent,
  emptyReplyView,
  modelUnavailableLine,
  renderReplyView,
  stopReplyView,
  withFailureLine,
  type ReplyViewState,
  type ShowReasoning,
} from "../../src/reply/reply-view.js";

const fold = (events: AgentEvent[], from: ReplyViewState = emptyReplyView()) => events.reduce(applyAgentEvent, from);
const show = (state: ReplyViewState, showReasoning: ShowReasoning = "collapsed") =>
  renderReplyView(state, { showReasoning });
const finish = (reason: "stop" | "length" | "max-rounds" | "aborted", text = ""): AgentEvent => ({
  type: "finish",
  reason,
  text,
  messages: [],
  rounds: 1,
});

describe("reply view", () => {
  it("shows tool activity while tools run, then the outcome, then the answer", () => {
    const running = fold([
      { type: "tool-call", round: 1, id: "a", name: "get_weather", arguments: '{"city":"北京"}' },
      { type: "tool-call", round: 1, id: "b", name: "get_time", arguments: "{}" },
    ]);
    expect(show(running)).toBe("🔧 get\\_weather(北京)…\n🔧 get\\_time()…");

    const done = fold(
      [
        { type: "tool-result", round: 1, id: "a", name: "get_weather", ok: true, output: "{}", durationMs: 5 },
        {
          type: "tool-result",
          round: 1,
          id: "b",
          name: "get_time",
          ok: false,
          output: '{"error":"unknown timezone \\"Mars/Base\\"\\nstack"}',
          durationMs: 1,
        },
        { type: "text-delta", round: 2, text: "\n\n北京今天晴，25°C。" },
        finish("stop", "北京今天晴，25°C。"),
      ],
      running,
    );
    expect(show(done)).toBe(
      '✅ get\\_weather(北京)\n⚠️ get\\_time(): unknown timezone "Mars/Base"\n\n北京今天晴，25°C。',
    );
  });

  it("truncates long arguments and keeps Markdown in them inert", () => {
    const state = fold([
      {
        type: "tool-call",
        round: 1,
        id: "a",
        name: "read_url",
        arguments: JSON.stringify({ url: `https://example.com/${"x".repeat(80)}*_[` }),
      },
    ]);
    const line = show(state);
    expect(line.startsWith("🔧 read\\_url(https://example.com/xxxx")).toBe(true);
    expect(line.endsWith("…)…")).toBe(true);
    expect([...line].length).toBeLessThan(70);
  });

  it("collapses reasoning to one line while it lasts, and nothing after", () => {
    const thinking = fold([{ type: "reasoning-delta", round: 1, text: "The user asks about weather" }]);
    expect(show(thinking, "collapsed")).toBe("💭 thinking…");
    expect(show(thinking, "off")).toBe("");
    const answered = fold([{ type: "text-delta", round: 1, text: "Sunny." }], thinking);
    expect(show(answered, "collapsed")).toBe("Sunny.");
  });

  it("shows reasoning in full as a quote above the answer", () => {
    const state = fold([
      { type: "reasoning-delta", round: 1, text: "Step one.\nStep two." },
      { type: "text-delta", round: 1, text: "Answer." },
    ]);
    expect(show(state, "full")).toBe("> 💭 Step one.\n> Step two.\n\nAnswer.");
  });

  it("notes a cut answer, the tool-round fuse, a stop and a failure", () => {
    const text: AgentEvent = { type: "text-delta", round: 1, text: "Partial ```js\ncode" };
    expect(show(fold([{ type: "text-delta", round: 1, text: "Partial" }, finish("length", "Partial")]))).toBe(
      "Partial\n\n✂️ _The answer was cut off: it reached the length limit._",
    );
    // A cut inside a code block: the note must not end up inside the code.
    expect(show(fold([{ ...text, text: "```js\ncode" }, finish("length")]))).toBe(
      "```js\ncode\n```\n\n✂️ _The answer was cut off: it reached the length limit._",
    );
    expect(show(fold([finish("max-rounds", "I could not finish within 5 tool rounds.")]))).toBe(
      "⚠️ I could not finish within 5 tool rounds.",
    );
    expect(show(stopReplyView(fold([{ type: "text-delta", round: 1, text: "Half" }])))).toBe("Half\n\n⏹ _stopped_");
    expect(show(withFailureLine(fold([{ type: "text-delta", round: 1, text: "Half" }]), modelUnavailableLine()))).toBe(
      `Half\n\n${modelUnavailableLine()}`,
    );
  });

  it("shows the finish text when nothing was streamed, and says so when there is no answer", () => {
    expect(show(fold([finish("stop", "Only at the end.")]))).toBe("Only at the end.");
    expect(show(fold([finish("stop", "")]))).toBe("_(no answer)_");
  });
});
