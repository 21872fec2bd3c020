import { describe, expect, it } from "vitest";
import { runCli } from "../test/support/run-cli.js";
import { DEFAULT_OPTIONS, HelpRequested, parseBenchArgs, wordsAt } from "./bench-options.js";

describe("parseBenchArgs", () => {
  it("runs the four levels over every chat kind, the bots role in its own process, by default", () => {
    expect(parseBenchArgs([])).toEqual(DEFAULT_OPTIONS);
    expect(DEFAULT_OPTIONS.levels).toEqual([1, 10, 100, 500]);
    expect(DEFAULT_OPTIONS.kinds).toEqual(["tg-private", "tg-group", "discord"]);
    expect(DEFAULT_OPTIONS.botsInProcess).toBe(false);
  });

  it("takes --levels, --quick and the answer length at 500", () => {
    expect(parseBenchArgs(["--levels", "1,10"]).levels).toEqual([1, 10]);
    const quick = parseBenchArgs(["--quick"]);
    expect(quick.levels).toEqual([1, 10]);
    expect(quick.answerWords).toBeLessThan(DEFAULT_OPTIONS.answerWords);
    const capped = parseBenchArgs(["--large-words", "120"]);
    expect(wordsAt(capped, 100)).toBe(300);
    expect(wordsAt(capped, 500)).toBe(120);
  });

  it("takes --kinds as a list of known kinds, each once, in table order", () => {
    expect(parseBenchArgs(["--kinds", "tg-private"]).kinds).toEqual(["tg-private"]);
    expect(parseBenchArgs(["--kinds", "discord, tg-private,discord"]).kinds).toEqual(["tg-private", "discord"]);
    expect(() => parseBenchArgs(["--kinds", "tg-private,slack"])).toThrow(/--kinds takes .*\(not slack\)[\s\S]*usage/);
    expect(() => parseBenchArgs(["--kinds"])).toThrow(/--kinds takes/);
    expect(() => parseBenchArgs(["--kinds", ","])).toThrow(/--kinds takes/);
  });

  it("keeps --bots-process and gives the old in-process bots role with --bots-in-process", () => {
    expect(parseBenchArgs(["--bots-process"]).botsInProcess).toBe(false);
    expect(parseBenchArgs(["--bots-in-process"]).botsInProcess).toBe(true);
  });

  it("runs without status reactions unless --status-reactions asks for them", () => {
    expect(DEFAULT_OPTIONS.statusReactions).toBe(false);
    expect(parseBenchArgs(["--status-reactions"]).statusReactions).toBe(true);
  });

  it("warms up with 100 conversations (10 with --quick), any number with --warm-up, none with 0", () => {
    expect(DEFAULT_OPTIONS.warmUpConversations).toBe(100);
    expect(parseBenchArgs(["--quick"]).warmUpConversations).toBe(10);
    expect(parseBenchArgs(["--warm-up", "30"]).warmUpConversations).toBe(30);
    expect(parseBenchArgs(["--quick", "--warm-up", "0"]).warmUpConversations).toBe(0);
    expect(() => parseBenchArgs(["--warm-up", "-1"])).toThrow(/--warm-up needs a whole number/);
    expect(() => parseBenchArgs(["--warm-up"])).toThrow(/--warm-up needs a whole number/);
  });

  it("runs one worker process by default, N with --workers N", () => {
    expect(DEFAULT_OPTIONS.workers).toBe(1);
    expect(parseBenchArgs(["--workers", "2"]).workers).toBe(2);
    expect(parseBenchArgs(["--workers", "2", "--levels", "100", "--quick"])).toMatchObject({
      workers: 2,
      levels: [100],
      quick: true,
    });
    expect(() => parseBenchArgs(["--workers", "0"])).toThrow(/--workers needs a positive whole number[\s\S]*usage/);
    expect(() => parseBenchArgs(["--workers", "1.5"])).toThrow(/--workers needs a positive whole number/);
    expect(() => parseBenchArgs(["--workers"])).toThrow(/--workers needs a positive whole number/);
  });

  it("--help is a request for the usage, not an error", () => {
    expect(() => parseBenchArgs(["--help"])).toThrow(HelpRequested);
    expect(() => parseBenchArgs(["-h"])).toThrow(/usage/);
    expect(() => parseBenchArgs(["--fast"])).not.toThrow(HelpRequested);
  });

  it("npm run bench -- --help prints the usage and exits 0", { timeout: 30_000 }, async () => {
    const run = await runCli("bench/run.ts", ["--help"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/usage/);
    expect(run.stderr).toBe("");
  });

  it("refuses what it does not know, with the usage", () => {
    expect(() => parseBenchArgs(["--levels", "ten"])).toThrow(/positive whole number[\s\S]*usage/);
    expect(() => parseBenchArgs(["--fast"])).toThrow(/unknown option --fast/);
  });
});
