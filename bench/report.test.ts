import { describe, expect, it } from "vitest";
import type { KindFigures, LevelFigures } from "./level-figures.js";
import { formatLevel, formatVerdicts } from "./report.js";

const MB = 1024 * 1024;

function kind(overrides: Partial<KindFigures> = {}): KindFigures {
  return {
    kind: "discord",
    conversations: 10,
    finished: 10,
    firstSignMs: { n: 10, p50: 8, p95: 15, p99: 20 },
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

function level(overrides: Partial<LevelFigures> = {}): LevelFigures {
  return {
    level: 100,
    answerWords: 300,
    waves: 1,
    wallMs: 10_000,
    kinds: [kind()],
    tokens: 31_000,
    worker: { cpuMicros: 600_000, peakRssBytes: 180 * MB, coresBusy: 0.06, loopDelayP99Ms: 12, cpuPerTokenMicros: 19.4 },
    bench: { cpuMicros: 1_000_000, peakRssBytes: 200 * MB, coresBusy: 0.1, loopDelayP99Ms: 15 },
    redis: { commands: 3000, perJob: 30, top: [["evalsha", 12]], historyMessages: 0 },
    machine: { loadAverage: 1.2, cores: 2, modelPace: { n: 10, p50: 39.8, p5: 39.1 } },
    jobs: { asked: 10, outcomes: { answered: 10 }, unfinished: 0, queueWaitMs: { n: 10, p50: 3, p99: 9 } },
    notes: [],
    ...overrides,
  };
}

describe("the report", () => {
  it("marks met targets and says all were met", () => {
    const block = formatLevel(level());
    expect(block).toMatch(/freshness p50\/p95 ms\s+520 \/ 1050 ✓ \(≤ 1100\)/);
    expect(block).toMatch(/19\.4 µs CPU per token ✓ \(≤ 30\)/);
    expect(formatVerdicts([level()])).toMatch(/^Targets: (\d+) of \1 met\.$/);
  });

  it("lists every target not met with its figure and its target", () => {
    const bad = level({
      kinds: [kind({ freshnessMs: { n: 3000, p50: 900, p95: 1600 }, violations: { total: 3, byRule: { "PATCH /channels/:id/messages/:id": 3 } } })],
      worker: { cpuMicros: 6_000_000, peakRssBytes: 300 * MB, coresBusy: 0.6, loopDelayP99Ms: 80, cpuPerTokenMicros: 193.5 },
    });
    expect(formatLevel(bad)).toMatch(/900 \/ 1600 ✗ \(≤ 1100\)/);
    const verdicts = formatVerdicts([bad]);
    expect(verdicts).toContain("✗ level 100: Discord channel: freshness p95 1600 ms (target ≤ 1100)");
    expect(verdicts).toContain("✗ level 100: Discord channel: 3 rate-limit violations (PATCH /channels/:id/messages/:id 3) (target 0)");
    expect(verdicts).toContain("✗ level 100: worker CPU 193.5 µs per token (target ≤ 30)");
    expect(verdicts).toContain("✗ level 100: worker peak RSS 300 MB (target ≤ 250)");
  });

  it("states the first-sign-of-life targets only up to 100 conversations", () => {
    const slow = kind({ firstSignMs: { n: 500, p50: 60, p99: 400 } });
    expect(formatVerdicts([level({ level: 500, kinds: [slow] })])).not.toContain("first sign");
    expect(formatVerdicts([level({ level: 100, kinds: [slow] })])).toContain("first sign of life p99 400 ms (target ≤ 100)");
  });
});
