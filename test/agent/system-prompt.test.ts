/** The system prompt a 1.7B model gets: short, and the same bytes all day (the model server's cached prefix). */
import { describe, expect, it } from "vitest";
import { buildSystemPrompt } from "../../src/agent/system-prompt.js";

describe("system prompt", () => {
  const prompt = buildSystemPrompt({ now: new Date("2025-06-03T06:05:00Z"), timeZone: "Asia/Shanghai" });

  it("states today's date in the given zone, and no time of day", () => {
    expect(prompt).toContain("Today is Tuesday 2025-06-03 (Asia/Shanghai).");
    expect(prompt).not.toMatch(/\d\d:\d\d/);
    expect(buildSystemPrompt({ now: new Date("2025-06-03T03:05:00Z"), timeZone: "America/New_York" })).toContain(
      "Monday 2025-06-02 (America/New_York)",
    );
  });

  it("is byte-identical all day, and changes at the zone's midnight (a half-hour and a 45-minute zone too)", () => {
    const at = (iso: string, timeZone: string) => buildSystemPrompt({ now: new Date(iso), timeZone });
    // Shanghai's day 2025-06-03 runs from 2025-06-02T16:00Z to 2025-06-03T15:59Z.
    expect(at("2025-06-02T16:00:00Z", "Asia/Shanghai")).toBe(at("2025-06-03T15:59:59Z", "Asia/Shanghai"));
    expect(at("2025-06-02T15:59:59Z", "Asia/Shanghai")).toContain("Monday 2025-06-02 (Asia/Shanghai)");
    expect(at("2025-06-03T18:29:59Z", "Asia/Kolkata")).toContain("Tuesday 2025-06-03 (Asia/Kolkata)");
    expect(at("2025-06-03T18:30:00Z", "Asia/Kolkata")).toContain("Wednesday 2025-06-04 (Asia/Kolkata)");
    expect(at("2025-06-03T18:14:59Z", "Asia/Kathmandu")).toContain("Tuesday 2025-06-03 (Asia/Kathmandu)");
    expect(at("2025-06-03T18:15:00Z", "Asia/Kathmandu")).toContain("Wednesday 2025-06-04 (Asia/Kathmandu)");
    // Back in time (a clock set back) is a new reading too, not the one kept.
    expect(at("2025-06-01T12:00:00Z", "Asia/Shanghai")).toContain("Sunday 2025-06-01");
  });

  it("a persona changes only the end of that chat's prompt", () => {
    const now = new Date("2025-06-03T06:05:00Z");
    const withPersona = buildSystemPrompt({ now, timeZone: "Asia/Shanghai", persona: "a pirate" });
    expect(withPersona.startsWith(prompt)).toBe(true);
    expect(withPersona.slice(prompt.length)).toContain("a pirate");
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
