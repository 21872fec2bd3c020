import { describe, expect, it } from "vitest";
import type { IdleFigures, KindFigures, LevelFigures } from "./level-figures.js";
import { cpuPerReplyMet, formatIdle, formatLevel, formatVerdicts, formatWarmUp } from "./report.js";

const MB = 1024 * 1024;

function kind(overrides: Partial<KindFigures> = {}): KindFigures {
  return {
    kind: "discord",
    conversations: 10,
    finished: 10,
    firstSignMs: { n: 10, p50: 8, p95: 15, p99: 20 },
    firstWordMs: { n: 10, p50: 610, p99: 780 },
    freshnessMs: { n: 3000, p50: 520, p95: 1050, p99: 1090 },
    neverShown: 0,
    finalMs: { n: 10, p50: 400, p99: 990 },
    finalBeyondWaitMs: { n: 10, p50: 4, p99: 12 },
    finalNoWaitMs: { n: 2, p50: 5 },
    perReply: { sends: 1, edits: 8, drafts: 0 },
    violations: { total: 0, byRule: {} },
    freshnessTargetMs: 1100,
    intervalMs: 1000,
    ...overrides,
  };
}

const process = (peakRssMb: number) => ({
  cpuMicros: 100_000,
  peakRssBytes: peakRssMb * MB,
  coresBusy: 0.01,
  loopDelayP99Ms: 11,
});

function level(overrides: Partial<LevelFigures> = {}): LevelFigures {
  return {
    level: 100,
    answerWords: 300,
    waves: 1,
    wallMs: 10_000,
    kinds: [kind()],
    tokens: 31_000,
    worker: {
      cpuMicros: 600_000,
      peakRssBytes: 140 * MB,
      coresBusy: 0.06,
      loopDelayP99Ms: 12,
      cpuPerTokenMicros: 19.4,
    },
    botsProcess: process(90),
    cpuPerReply: { replies: 10, workerMs: 60, botsMs: 10, totalMs: 70 },
    cpuPerReplyByKind: {},
    bench: { cpuMicros: 1_000_000, peakRssBytes: 200 * MB, coresBusy: 0.1, loopDelayP99Ms: 15 },
    redis: { commands: 3000, perJob: 30, top: [["evalsha", 12]], historyMessages: 0 },
    machine: { loadAverage: 1.2, cores: 2, modelPace: { n: 10, p50: 39.8, p5: 39.1 } },
    jobs: { asked: 10, outcomes: { answered: 10 }, unfinished: 0, queueWaitMs: { n: 10, p50: 3, p99: 9 } },
    notes: [],
    ...overrides,
  };
}

/** A level of Telegram private chats alone, whose replies cost `workerMs` (+ `botsMs`) each. */
function privateAlone(workerMs: number, botsMs: number | undefined): LevelFigures {
  const figure =
    botsMs === undefined
      ? { replies: 100, workerMs, totalMs: workerMs }
      : { replies: 100, workerMs, botsMs, totalMs: workerMs + botsMs };
  return level({
    kinds: [kind({ kind: "tg-private", freshnessTargetMs: 400, freshnessMs: { n: 30_000, p50: 150, p95: 300 } })],
    cpuPerReply: figure,
    cpuPerReplyByKind: { "tg-private": figure },
    ...(botsMs === undefined ? { botsProcess: undefined } : {}),
  });
}

const idle = (botsRssMb: number | undefined): IdleFigures => ({
  settleMs: 2000,
  worker: { rssBytes: 120 * MB, maxRssBytes: 180 * MB, heapUsedBytes: 30 * MB, heapTotalBytes: 60 * MB, gcRan: true },
  ...(botsRssMb !== undefined
    ? {
        bots: {
          rssBytes: botsRssMb * MB,
          maxRssBytes: 170 * MB,
          heapUsedBytes: 20 * MB,
          heapTotalBytes: 50 * MB,
          gcRan: true,
        },
      }
    : {}),
});

describe("the report", () => {
  it("marks met targets and says all were met", () => {
    const block = formatLevel(level());
    expect(block).toMatch(/freshness p50\/p95 ms\s+520 \/ 1050 ✓ \(≤ 1100\)/);
    expect(block).toMatch(/first word visible p50\/p99 ms\s+610 \/ 780\s+— \(question → first answer word shown\)/);
    expect(block).toMatch(/19\.4 µs CPU per token ✓ \(≤ 60\)/);
    expect(block).toMatch(/worker .* peak RSS 140 MB ✓ \(≤ 150\)/);
    expect(block).toMatch(/bots +peak RSS 90 MB ✓ \(≤ 120\)/);
    expect(block).toMatch(/30\.0 commands per job \(sent \+ inside Lua scripts\) ✓ \(≤ 120\)/);
    expect(formatVerdicts([level()], idle(95))).toMatch(/^Targets: (\d+) of \1 met\.$/);
  });

  it("lists every target not met with its figure and its target", () => {
    const bad = level({
      kinds: [
        kind({
          freshnessMs: { n: 3000, p50: 900, p95: 1600 },
          violations: { total: 3, byRule: { "PATCH /channels/:id/messages/:id": 3 } },
        }),
      ],
      worker: {
        cpuMicros: 6_000_000,
        peakRssBytes: 177 * MB,
        coresBusy: 0.6,
        loopDelayP99Ms: 80,
        cpuPerTokenMicros: 193.5,
      },
      botsProcess: process(172),
      redis: { commands: 33_500, perJob: 335, top: [["evalsha", 120]], historyMessages: 0 },
    });
    expect(formatLevel(bad)).toMatch(/900 \/ 1600 ✗ \(≤ 1100\)/);
    const verdicts = formatVerdicts([bad], idle(101));
    expect(verdicts).toContain("✗ level 100: Discord channel: freshness p95 1600 ms (target ≤ 1100)");
    expect(verdicts).toContain(
      "✗ level 100: Discord channel: 3 rate-limit violations (PATCH /channels/:id/messages/:id 3) (target 0)",
    );
    expect(verdicts).toContain("✗ level 100: worker CPU 193.5 µs per token (target ≤ 60)");
    expect(verdicts).toContain("✗ level 100: worker peak RSS 177 MB (target ≤ 150)");
    expect(verdicts).toContain("✗ level 100: bots process peak RSS 172 MB (target ≤ 120)");
    expect(verdicts).toContain("✗ level 100: 335.0 Redis commands per job (target ≤ 120)");
    expect(verdicts).toContain("✗ idle: bots process idle RSS 101 MB (target ≤ 100)");
  });

  it("shows the process figures at other levels without a verdict, saying where their targets are stated", () => {
    const heavy = {
      cpuMicros: 9_000_000,
      peakRssBytes: 400 * MB,
      coresBusy: 0.9,
      loopDelayP99Ms: 80,
      cpuPerTokenMicros: 900,
    };
    const ten = level({
      level: 10,
      worker: heavy,
      botsProcess: process(200),
      redis: { commands: 8000, perJob: 800, top: [], historyMessages: 0 },
    });
    const block = formatLevel(ten);
    expect(block).toContain("900.0 µs CPU per token · (≤ 60 at 100)");
    expect(block).toContain("peak RSS 400 MB · (≤ 150 at 100, ≤ 300 at 500)");
    expect(block).toContain("peak RSS 200 MB · (≤ 120 at 100)");
    expect(block).toContain("800.0 commands per job (sent + inside Lua scripts) · (≤ 120 at 100)");
    expect(formatVerdicts([ten])).not.toMatch(/worker|bots|Redis/);
    const fiveHundred = formatVerdicts([level({ level: 500, worker: heavy })]);
    expect(fiveHundred).toContain("✗ level 500: worker peak RSS 400 MB (target ≤ 300)");
    expect(fiveHundred).not.toContain("CPU");
  });

  it("states the first-sign-of-life targets only up to 100 conversations", () => {
    const slow = kind({ firstSignMs: { n: 500, p50: 60, p99: 400 } });
    expect(formatVerdicts([level({ level: 500, kinds: [slow] })])).not.toContain("first sign");
    expect(formatVerdicts([level({ level: 100, kinds: [slow] })])).toContain(
      "first sign of life p99 400 ms (target ≤ 100)",
    );
  });
});

describe("CPU per reply", () => {
  it("judges worker + bots below 40 ms when the level at 100 is Telegram private chats alone", () => {
    const met = privateAlone(30, 5);
    expect(formatLevel(met)).toMatch(/CPU per reply ms, worker \+ bots +35\.0 = 30\.0 \+ 5\.0 ✓/);
    expect(formatLevel(met)).toContain(
      "per reply 35.0 ms CPU = 30.0 worker + 5.0 bots · Telegram private (drafts) alone",
    );
    expect(formatVerdicts([met])).toMatch(/^Targets: (\d+) of \1 met\.$/);
    // "Below 40": 40 itself is not met.
    expect(formatVerdicts([privateAlone(35, 5)])).toContain(
      "✗ level 100: Telegram private (drafts): worker + bots CPU 40.0 ms per reply (target < 40)",
    );
  });

  it("shows a mixed level's figure without the target, and no kind's figure", () => {
    const mixed = level({ kinds: [kind({ kind: "tg-private" }), kind({ kind: "tg-group" }), kind()] });
    const block = formatLevel(mixed);
    expect(block).toMatch(/CPU per reply ms, worker \+ bots +– \(kinds mixed\) +– \(kinds mixed\) +– \(kinds mixed\)/);
    expect(block).toContain("per reply 70.0 ms CPU = 60.0 worker + 10.0 bots · every kind of the level together");
    expect(formatVerdicts([mixed])).not.toContain("per reply");
  });

  it("shows each kind's figure where it had its own waves, without a target below 100", () => {
    const one = level({
      level: 1,
      waves: 3,
      kinds: [kind({ kind: "tg-private" }), kind()],
      cpuPerReplyByKind: {
        "tg-private": { replies: 1, workerMs: 50, botsMs: 5, totalMs: 55 },
        discord: { replies: 1, workerMs: 70, botsMs: 9, totalMs: 79 },
      },
    });
    expect(formatLevel(one)).toMatch(
      /CPU per reply ms, worker \+ bots +55\.0 = 50\.0 \+ 5\.0 +79\.0 = 70\.0 \+ 9\.0 +Telegram private alone: < 40 at 100/,
    );
    expect(formatVerdicts([one])).not.toContain("per reply");
  });

  it("calls the figure worker-only without a bots process: it can fail the target but not pass it", () => {
    expect(cpuPerReplyMet({ replies: 1, workerMs: 41, totalMs: 41 }, 40)).toBe(false);
    expect(cpuPerReplyMet({ replies: 1, workerMs: 30, totalMs: 30 }, 40)).toBeUndefined();
    expect(cpuPerReplyMet({ replies: 1, workerMs: 30, botsMs: 9.9, totalMs: 39.9 }, 40)).toBe(true);
    const inProcess = privateAlone(30, undefined);
    const block = formatLevel(inProcess);
    expect(block).toMatch(/CPU per reply ms, worker \+ bots +30\.0 worker only \?/);
    expect(block).toContain("per reply 30.0 ms worker CPU, worker only (the bots role runs in the benchmark process");
    expect(block).toContain("bots      in the benchmark process: no CPU or RSS figure of its own ? (peak RSS ≤ 120)");
    const verdicts = formatVerdicts([inProcess]);
    expect(verdicts).toMatch(/^Targets: (\d+) of \1 met, 2 not measurable in this run\./);
    expect(verdicts).toContain("? level 100: Telegram private (drafts): worker + bots CPU per reply not measured");
    expect(verdicts).toContain(
      "? level 100: bots role peak RSS not measured: it ran in the benchmark process (target ≤ 120)",
    );
    expect(formatVerdicts([privateAlone(45, undefined)])).toContain(
      "✗ level 100: Telegram private (drafts): worker + bots CPU per reply not measured",
    );
  });
});

describe("the idle sample", () => {
  it("judges the bots role's RSS at rest and shows the worker's for context", () => {
    const block = formatIdle(idle(95));
    expect(block).toContain("after the warm-up, 2.0 s to settle and two full GCs in each role process");
    expect(block).toContain(
      "worker    RSS 120 MB · V8 heap 60 MB committed, 30 MB in use · high-water mark since start 180 MB · no idle target",
    );
    expect(block).toContain(
      "bots      RSS 95 MB ✓ (≤ 100) · V8 heap 50 MB committed, 20 MB in use · high-water mark since start 170 MB",
    );
    expect(formatIdle({ ...idle(95), worker: { rssBytes: 120 * MB, maxRssBytes: 130 * MB, gcRan: false } })).toContain(
      "worker    RSS 120 MB (no GC: the probe could not trigger one) · high-water mark since start 130 MB",
    );
  });

  it("says the bots role's idle RSS is not measurable when it runs in the benchmark process", () => {
    expect(formatIdle(idle(undefined))).toContain("bots      in the benchmark process: no RSS of its own ?");
    expect(formatVerdicts([], idle(undefined))).toBe(
      "Targets: 0 of 0 met, 1 not measurable in this run.\n  ? idle: bots role idle RSS not measured: it ran in the benchmark process (target ≤ 100)",
    );
  });
});

describe("the warm-up wave", () => {
  it("shows its CPU per reply by role, as context and never as a level", () => {
    const line = formatWarmUp({
      conversations: 100,
      kinds: ["tg-private"],
      answerWords: 300,
      workerCpuMicros: 5_520_000,
      botsCpuMicros: 610_000,
    });
    expect(line).toBe(
      "warm-up   100 conversations (Telegram private (drafts)) · 300-word answers · not a level: 55.2 ms worker + 6.1 bots CPU per reply while V8 compiles the hot paths (a new process pays this once)",
    );
    expect(
      formatWarmUp({ conversations: 10, kinds: ["tg-private", "discord"], answerWords: 60, workerCpuMicros: 300_000 }),
    ).toContain(
      "10 conversations (Telegram private (drafts), Discord channel) · 60-word answers · not a level: 30.0 ms worker (worker only) CPU per reply",
    );
  });
});
