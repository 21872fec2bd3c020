import { describe, expect, it } from "vitest";
import { DEFAULT_OPTIONS, parseBenchArgs, wordsAt } from "./bench-options.js";

describe("parseBenchArgs", () => {
  it("runs the four levels by default", () => {
    expect(parseBenchArgs([])).toEqual(DEFAULT_OPTIONS);
    expect(DEFAULT_OPTIONS.levels).toEqual([1, 10, 100, 500]);
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

  it("refuses what it does not know, with the usage", () => {
    expect(() => parseBenchArgs(["--levels", "ten"])).toThrow(/positive whole number[\s\S]*usage/);
    expect(() => parseBenchArgs(["--fast"])).toThrow(/unknown option --fast/);
  });
});
