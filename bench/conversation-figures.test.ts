import { describe, expect, it } from "vitest";
import { conversationFigures, highestWordShown, type ChatWrite } from "./conversation-figures.js";

const write = (at: number, kind: ChatWrite["kind"], shows: number, extra: Partial<ChatWrite> = {}): ChatWrite => ({
  at,
  kind,
  ok: true,
  shows,
  final: kind === "send" || kind === "edit",
  ...extra,
});

/** Emission times of words 1..n, one every `gap` ms from `from`. */
const emitted = (n: number, from: number, gap: number): number[] => {
  const at: number[] = [];
  for (let k = 1; k <= n; k++) at[k] = from + (k - 1) * gap;
  return at;
};

describe("conversationFigures", () => {
  it("times the first sign of life from the delivery to the first request in the chat, whatever it is", () => {
    const f = conversationFigures({
      deliveredAt: 1000,
      writes: [write(1012, "draft", 0), write(1004, "typing", 0)],
      stream: { tokens: 0, answerAt: [] },
      intervalMs: 1100,
      answerWords: 4,
    });
    expect(f.firstSignMs).toBe(4);
  });

  it("times the first word from the delivery to the first accepted request that shows a word of the answer", () => {
    const f = conversationFigures({
      deliveredAt: 1000,
      writes: [
        write(1004, "typing", 0),
        write(1012, "send", 0), // the placeholder: a sign of life, no word yet
        write(1300, "edit", 3, { ok: false }), // refused: the user never saw it
        write(1420, "edit", 5),
      ],
      stream: { tokens: 5, answerAt: emitted(5, 1200, 10), finishAt: 1260 },
      intervalMs: 1000,
      answerWords: 5,
    });
    expect(f.firstSignMs).toBe(4);
    expect(f.firstWordMs).toBe(420);
  });

  it("measures each word from its emission to the first accepted request that shows it", () => {
    const f = conversationFigures({
      writes: [
        write(150, "draft", 2),
        write(200, "draft", 3, { ok: false }), // refused: the user never saw it
        write(400, "send", 4),
      ],
      stream: { tokens: 4, answerAt: emitted(4, 100, 10), finishAt: 140 },
      intervalMs: 1100,
      answerWords: 4,
    });
    // w1 at 100 and w2 at 110 shown at 150; w3 (120) and w4 (130) only by the message at 400.
    expect(f.freshnessMs).toEqual([50, 40, 280, 270]);
    expect(f.neverShown).toBe(0);
  });

  it("counts words the platform never showed instead of timing them", () => {
    const f = conversationFigures({
      writes: [write(150, "edit", 2, { final: false })],
      stream: { tokens: 3, answerAt: emitted(3, 100, 10) },
      intervalMs: 1000,
      answerWords: 3,
    });
    expect(f.freshnessMs).toEqual([50, 40]);
    expect(f.neverShown).toBe(1);
    expect(f.finalMs).toBeUndefined();
  });

  it("does not count a draft as due pacing for the final message (drafts have their own lane)", () => {
    const f = conversationFigures({
      writes: [write(10, "typing", 0), write(150, "draft", 2), write(1251, "send", 4)],
      stream: { tokens: 4, answerAt: emitted(4, 100, 10), finishAt: 300 },
      intervalMs: 1100,
      answerWords: 4,
    });
    expect(f.finalMs).toBe(951);
    expect(f.dueWaitMs).toBe(0);
    expect(f.drafts).toBe(1);
  });

  it("splits the final latency into the wait the pacing imposed and the rest", () => {
    const f = conversationFigures({
      writes: [write(10, "typing", 0), write(150, "edit", 2, { final: false }), write(1251, "edit", 4)],
      stream: { tokens: 4, answerAt: emitted(4, 100, 10), finishAt: 300 },
      intervalMs: 1100,
      answerWords: 4,
    });
    expect(f.finalMs).toBe(951);
    // The edit at 150 allows the next request at 1250: 950 ms of the 951 were due.
    expect(f.dueWaitMs).toBe(950);
    expect(f.edits).toBe(2);
  });

  it("finds no wait due when the last request is an interval before the finish, and ignores typing", () => {
    const f = conversationFigures({
      writes: [write(100, "edit", 1, { final: false }), write(2500, "typing", 0), write(2520, "edit", 5)],
      stream: { tokens: 5, answerAt: emitted(5, 50, 100), finishAt: 2500 },
      intervalMs: 1000,
      answerWords: 5,
    });
    expect(f.finalMs).toBe(20);
    expect(f.dueWaitMs).toBe(0);
  });

  it("takes as final only a complete answer in its final state", () => {
    const f = conversationFigures({
      writes: [write(500, "edit", 5, { final: false }), write(900, "edit", 5)],
      stream: { tokens: 5, answerAt: emitted(5, 50, 10), finishAt: 120 },
      intervalMs: 300,
      answerWords: 5,
    });
    expect(f.finalMs).toBe(780);
  });
});

describe("highestWordShown", () => {
  it("reads the highest numbered word from rendered text", () => {
    expect(highestWordShown("w1 w2 <b>w130</b>\n\nw7")).toBe(130);
    expect(highestWordShown("⏳ … sw12 w")).toBe(0);
  });
});
