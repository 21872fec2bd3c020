import { describe, expect, it } from "vitest";
import type { BenchConversation } from "./chat-platforms.js";
import type { ChatKind } from "./conversation-figures.js";
import { cpuPerReply, cpuPerReplyByKind, limitAt, planLevel, TARGETS } from "./level-figures.js";
import type { ProcessUse } from "./wave.js";

const conversations = (...kinds: ChatKind[]): BenchConversation[] =>
  kinds.map((kind, i) => ({ id: i + 1, kind, chatId: String(i + 1), conversationKey: `tg:${i + 1}` }));
const use = (cpuMicros: number): ProcessUse => ({ cpuMicros, peakRssBytes: 0, loopDelayP99Ms: 0, loopDelayMaxMs: 0 });

describe("planLevel", () => {
  it("rotates a level over the chosen kinds, or gives each kind its own wave below their number", () => {
    expect(planLevel(1)).toEqual([["tg-private"], ["tg-group"], ["discord"]]);
    expect(planLevel(4)).toEqual([["tg-private", "tg-group", "discord", "tg-private"]]);
    expect(planLevel(1, ["tg-private"])).toEqual([["tg-private"]]);
    expect(planLevel(10, ["tg-private"])).toEqual([Array.from({ length: 10 }, () => "tg-private")]);
    expect(planLevel(1, ["tg-group", "discord"])).toEqual([["tg-group"], ["discord"]]);
    expect(planLevel(3, ["tg-group", "discord"])).toEqual([["tg-group", "discord", "tg-group"]]);
  });
});

describe("cpuPerReply", () => {
  it("adds the worker's and the bots process' CPU and divides by the replies, in ms", () => {
    const figure = cpuPerReply([
      { conversations: conversations("tg-private", "tg-private"), worker: use(50_000), botsProcess: use(10_000) },
      { conversations: conversations("tg-private", "tg-private"), worker: use(70_000), botsProcess: use(6_000) },
    ]);
    expect(figure).toEqual({ replies: 4, workerMs: 30, botsMs: 4, totalMs: 34 });
  });

  it("says the figure is the worker's alone when the bots role had no process of its own in every wave", () => {
    expect(cpuPerReply([{ conversations: conversations("discord"), worker: use(25_000) }])).toEqual({
      replies: 1,
      workerMs: 25,
      totalMs: 25,
    });
    const partly = cpuPerReply([
      { conversations: conversations("discord"), worker: use(25_000), botsProcess: use(5_000) },
      { conversations: conversations("discord"), worker: use(25_000) },
    ]);
    expect(partly?.botsMs).toBeUndefined();
    expect(partly?.totalMs).toBe(25);
    expect(cpuPerReply([])).toBeUndefined();
  });

  it("separates a kind only where it had waves to itself", () => {
    const levelOne = [
      { conversations: conversations("tg-private"), worker: use(30_000), botsProcess: use(3_000) },
      { conversations: conversations("tg-group"), worker: use(20_000), botsProcess: use(2_000) },
      { conversations: conversations("discord"), worker: use(40_000), botsProcess: use(8_000) },
    ];
    const byKind = cpuPerReplyByKind(levelOne);
    expect(byKind["tg-private"]?.totalMs).toBe(33);
    expect(byKind["tg-group"]?.totalMs).toBe(22);
    expect(byKind.discord?.totalMs).toBe(48);
    const mixed = [
      {
        conversations: conversations("tg-private", "tg-group", "discord"),
        worker: use(90_000),
        botsProcess: use(9_000),
      },
    ];
    expect(cpuPerReplyByKind(mixed)).toEqual({});
    expect(cpuPerReply(mixed)?.totalMs).toBe(33);
  });
});

describe("the targets", () => {
  it("states the process targets at 100 conversations, the worker's RSS also at 500", () => {
    expect(limitAt(TARGETS.workerCpuPerTokenMicros, 100)).toBe(60);
    expect(limitAt(TARGETS.workerCpuPerTokenMicros, 10)).toBeUndefined();
    expect(limitAt(TARGETS.workerPeakRssMb, 100)).toBe(150);
    expect(limitAt(TARGETS.workerPeakRssMb, 500)).toBe(300);
    expect(limitAt(TARGETS.workerPeakRssMb, 200)).toBeUndefined();
    expect(limitAt(TARGETS.botsPeakRssMb, 100)).toBe(120);
    expect(limitAt(TARGETS.botsPeakRssMb, 500)).toBeUndefined();
    expect(limitAt(TARGETS.redisPerJob, 100)).toBe(120);
    expect(limitAt(TARGETS.tgPrivateCpuPerReplyMs, 100)).toBe(40);
    expect(TARGETS.botsIdleRssMb).toBe(100);
  });
});
