import { describe, expect, it } from "vitest";
import { describeInstant, isTimeZone, parseWhen } from "../../src/schedules/schedule-when.js";

// Friday 2026-12-04 16:30 UTC = Saturday 00:30 in Shanghai.
const now = new Date("2026-12-04T16:30:00Z");

describe("parseWhen", () => {
  it("reads delays", () => {
    expect(parseWhen("in 5 seconds", now, "UTC")).toEqual({ kind: "once", at: new Date("2026-12-04T16:30:05Z") });
    expect(parseWhen("in 20 minutes", now, "UTC")).toEqual({ kind: "once", at: new Date("2026-12-04T16:50:00Z") });
    expect(parseWhen("2h", now, "UTC")).toEqual({ kind: "once", at: new Date("2026-12-04T18:30:00Z") });
  });

  it("reads times in the chat's zone", () => {
    // Tomorrow in Shanghai is Sunday 6 December; 8:00 there is 00:00 UTC.
    expect(parseWhen("tomorrow at 8", now, "Asia/Shanghai")).toEqual({
      kind: "once",
      at: new Date("2026-12-06T00:00:00Z"),
    });
    expect(describeInstant(new Date("2026-12-06T00:00:00Z"), "Asia/Shanghai")).toBe(
      "Sun 2026-12-06 08:00 (Asia/Shanghai)",
    );
    expect(parseWhen("2026-12-24 09:00", now, "America/New_York")).toEqual({
      kind: "once",
      at: new Date("2026-12-24T14:00:00Z"),
    });
    // A bare time already past today is tomorrow's; 8pm is 20:00.
    expect(parseWhen("8:00", now, "UTC")).toEqual({ kind: "once", at: new Date("2026-12-05T08:00:00Z") });
    expect(parseWhen("at 8pm", now, "UTC")).toEqual({ kind: "once", at: new Date("2026-12-04T20:00:00Z") });
  });

  it("reads repeating rules, never more often than once a minute", () => {
    expect(parseWhen("every weekday at 08:00", now, "UTC")).toEqual({
      kind: "repeat",
      pattern: "0 8 * * 1-5",
      label: "every weekday at 08:00",
    });
    expect(parseWhen("every monday at 9:30", now, "UTC")).toMatchObject({ pattern: "30 9 * * 1" });
    expect(parseWhen("every minute", now, "UTC")).toMatchObject({ kind: "repeat", everyMinutes: 1 });
    expect(parseWhen("every 2 hours", now, "UTC")).toMatchObject({ everyMinutes: 120, label: "every 2 hours" });
    expect(parseWhen("every 30 seconds", now, "UTC")).toEqual({
      kind: "error",
      problem: "a schedule repeats at most once a minute",
    });
  });

  it("says what it could not read, and refuses the past", () => {
    expect(parseWhen("today at 8", now, "UTC")).toEqual({
      kind: "error",
      problem: "that time is already past; give a time in the future",
    });
    expect(parseWhen("2020-01-01 10:00", now, "UTC")).toMatchObject({ kind: "error" });
    expect(parseWhen("whenever you like", now, "UTC")).toMatchObject({
      kind: "error",
      problem: expect.stringContaining('could not read the time "whenever you like"'),
    });
    expect(parseWhen("at 25:00", now, "UTC")).toMatchObject({ kind: "error" });
  });

  it("knows zones", () => {
    expect(isTimeZone("Asia/Shanghai")).toBe(true);
    expect(isTimeZone("Mars/Olympus")).toBe(false);
    expect(isTimeZone("")).toBe(false);
  });
});
