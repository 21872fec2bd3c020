import { describe, expect, it } from "vitest";
import { createGetTimeTool, resolveTimeZone, type TimeReport } from "../../src/tools/get-time.js";
import { ToolError } from "../../src/tools/tool-error.js";

const ctx = () => ({ signal: new AbortController().signal });
const at = (iso: string) => () => new Date(iso);

describe("get_time", () => {
  it("returns the time in the asked IANA zone with offset, weekday and a readable form", async () => {
    const tool = createGetTimeTool({ now: at("2025-06-18T06:40:05Z") });
    expect(await tool.execute({ timezone: "Asia/Shanghai" }, ctx())).toEqual({
      timezone: "Asia/Shanghai",
      iso: "2025-06-18T14:40:05+08:00",
      local: "Wednesday, 18 June 2025 at 14:40:05",
      weekday: "Wednesday",
      utc_offset: "+08:00",
    });
  });

  it("crosses the date line and follows daylight saving", async () => {
    const tool = createGetTimeTool({ now: at("2025-01-01T02:00:00Z") });
    const ny = (await tool.execute({ timezone: "America/New_York" }, ctx())) as TimeReport;
    expect(ny).toMatchObject({ iso: "2024-12-31T21:00:00-05:00", weekday: "Tuesday", utc_offset: "-05:00" });
    const summer = createGetTimeTool({ now: at("2025-07-01T02:00:00Z") });
    expect(((await summer.execute({ timezone: "America/New_York" }, ctx())) as TimeReport).utc_offset).toBe("-04:00");
    expect((await tool.execute({ timezone: "Asia/Kolkata" }, ctx())) as TimeReport).toMatchObject({
      timezone: "Asia/Kolkata",
      utc_offset: "+05:30",
    });
  });

  it("uses the configured default zone when none (or an empty one) is given", async () => {
    const tool = createGetTimeTool({ now: at("2025-06-18T06:40:00Z"), defaultTimeZone: "Europe/London" });
    expect((await tool.execute({}, ctx())) as TimeReport).toMatchObject({
      timezone: "Europe/London",
      iso: "2025-06-18T07:40:00+01:00",
    });
    expect(((await tool.execute({ timezone: "" }, ctx())) as TimeReport).timezone).toBe("Europe/London");
    const utc = createGetTimeTool({ now: at("2025-06-18T06:40:00Z"), defaultTimeZone: "UTC" });
    expect((await utc.execute({}, ctx())) as TimeReport).toMatchObject({
      iso: "2025-06-18T06:40:00+00:00",
      utc_offset: "+00:00",
    });
  });

  it("maps what small models write instead of IANA names", () => {
    expect(resolveTimeZone("asia/shanghai")).toBe("Asia/Shanghai");
    expect(resolveTimeZone("UTC+8")).toBe("Etc/GMT-8");
    expect(resolveTimeZone("GMT-5")).toBe("Etc/GMT+5");
    expect(resolveTimeZone("+08:00")).toBe("Etc/GMT-8");
    expect(resolveTimeZone("utc")).toBe("UTC");
    expect(resolveTimeZone("北京")).toBe("Asia/Shanghai");
    expect(resolveTimeZone("Asia/Beijing")).toBe("Asia/Shanghai");
    // Object.prototype's keys are no alias: an unknown zone, not a crash on a function.
    expect(() => resolveTimeZone("constructor")).toThrow(/unknown timezone "constructor"/);
  });

  it("an unknown zone is an error that names it and shows valid ones", async () => {
    const tool = createGetTimeTool({ now: at("2025-06-18T06:40:00Z") });
    const err = await tool.execute({ timezone: "Mars/Olympus_Mons" }, ctx()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ToolError);
    expect((err as Error).message).toBe(
      'unknown timezone "Mars/Olympus_Mons": use an IANA name like "Asia/Shanghai", "Europe/London" or "America/New_York", or leave it out',
    );
    expect(() => resolveTimeZone("UTC+5:30")).toThrow(
      /unknown timezone "UTC\+5:30": use an IANA name such as "Asia\/Kolkata"/,
    );
  });
});
