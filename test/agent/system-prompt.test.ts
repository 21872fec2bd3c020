/** The system prompt a 1.7B model gets. */
import { describe, expect, it } from "vitest";
import { buildSystemPrompt } from "../../src/agent/system-prompt.js";

describe("system prompt", () => {
  const prompt = buildSystemPrompt({ now: new Date("2025-06-03T06:05:00Z"), timeZone: "Asia/Shanghai" });

  it("states the current date and time in the given zone", () => {
    expect(prompt).toContain("Tuesday 2025-06-03 14:05 (Asia/Shanghai)");
    expect(buildSystemPrompt({ now: new Date("2025-06-03T06:05:00Z"), timeZone: "America/New_York" })).toContain(
      "2025-06-03 02:05",
    );
  });

  it("shows each minute as it comes, in each zone, however many requests a minute brings", () => {
    const at = (iso: string, timeZone: string) => buildSystemPrompt({ now: new Date(iso), timeZone }).split("\n")[0];
    expect(at("2025-06-03T06:05:59Z", "Asia/Shanghai")).toContain("Tuesday 2025-06-03 14:05 (Asia/Shanghai)");
    expect(at("2025-06-03T06:06:00Z", "Asia/Shanghai")).toContain("Tuesday 2025-06-03 14:06 (Asia/Shanghai)");
    expect(at("2025-06-03T06:06:00Z", "Asia/Kolkata")).toContain("Tuesday 2025-06-03 11:36 (Asia/Kolkata)");
    expect(at("2025-06-03T06:06:30Z", "Asia/Shanghai")).toContain("14:06 (Asia/Shanghai)");
    // Back in time (a clock set back) is a new reading too, not the one kept.
    expect(at("2025-06-02T16:00:00Z", "Asia/Shanghai")).toContain("Tuesday 2025-06-03 00:00 (Asia/Shanghai)");
    expect(at("2025-06-02T15:59:00Z", "Asia/Shanghai")).toContain("Monday 2025-06-02 23:59 (Asia/Shanghai)");
  });

  it("carries the four rules, the language rule and the group-chat convention, and stays short", () => {
    expect(prompt).toMatch(/Never make them up/);
    expect(prompt).toMatch(/get_news, then call read_url/);
    expect(prompt).toMatch(/briefly/);
    expect(prompt).toMatch(/no tool is needed/);
    expect(prompt).toMatch(/user's language/);
    expect(prompt).toMatch(/speaker's name/);
    expect(prompt.length).toBeLessThan(1_000);
  });
});
