/**
 * get_time: the current date and time in an IANA time zone or the server's own. Small models often write
 * "UTC+8" or a city instead of a zone: the common forms are mapped, anything else refused with valid examples.
 */
import { z } from "zod";
import { defineTool, type Tool } from "./tool.js";
import { ToolError } from "./tool-error.js";

/** Dependencies of get_time. */
interface GetTimeDeps {
  now?: () => Date;
  /** The zone used when the model gives none (default: the server's zone). */
  defaultTimeZone?: string;
}

/** What get_time returns to the model. */
export interface TimeReport {
  timezone: string;
  /** Local date-time with its UTC offset, e.g. "2025-06-18T14:40:00+08:00". */
  iso: string;
  /** Human-readable, e.g. "Wednesday 18 June 2025 at 14:40:00". */
  local: string;
  weekday: string;
  /** e.g. "+08:00". */
  utc_offset: string;
}

const timeArgs = z.object({
  timezone: z
    .string()
    .trim()
    .max(64, { message: "a time zone name is at most 64 characters" })
    .optional()
    .describe(
      'IANA time zone name, e.g. "Asia/Shanghai", "Europe/London", "America/New_York", "UTC". Leave it out for the server\'s local time.',
    ),
});

/** Names small models use that are not IANA zones, mapped to the zone they mean. */
const ALIASES: Record<string, string> = {
  "asia/beijing": "Asia/Shanghai",
  beijing: "Asia/Shanghai",
  北京: "Asia/Shanghai",
  shanghai: "Asia/Shanghai",
  上海: "Asia/Shanghai",
  china: "Asia/Shanghai",
  中国: "Asia/Shanghai",
  "china standard time": "Asia/Shanghai",
  北京时间: "Asia/Shanghai",
};

/** Builds the get_time tool. */
export function createGetTimeTool(deps: GetTimeDeps = {}): Tool<typeof timeArgs> {
  const now = deps.now ?? (() => new Date());
  const fallbackZone = deps.defaultTimeZone ?? new Intl.DateTimeFormat().resolvedOptions().timeZone;
  return defineTool({
    name: "get_time",
    description:
      "Get the current date, time and weekday, in a given IANA time zone or the server's local time. " +
      "Use it for any question about today's date, the time now, or the day of the week. Never guess the date.",
    schema: timeArgs,
    async execute({ timezone }) {
      const zone = resolveTimeZone(timezone && timezone !== "" ? timezone : fallbackZone);
      return describeTime(now(), zone);
    },
  });
}

/** The canonical IANA name for what the model wrote, or a ToolError naming the zone. */
export function resolveTimeZone(name: string): string {
  const key = name.trim().toLowerCase();
  const offset = key.match(/^(?:utc|gmt)?\s*([+-])\s*(\d{1,2})(?::?(\d{2}))?$/);
  // Own keys only: the model's word must not find Object.prototype ("constructor").
  let candidate = (Object.hasOwn(ALIASES, key) ? ALIASES[key] : undefined) ?? name.trim();
  if (offset) {
    const hours = Number(offset[2]);
    const minutes = Number(offset[3] ?? 0);
    if (minutes !== 0 || hours > 14) {
      throw new ToolError(
        `unknown timezone "${name}": use an IANA name such as "Asia/Kolkata" for offsets that are not whole hours`,
      );
    }
    // POSIX-style Etc zones have the sign inverted: UTC+8 is Etc/GMT-8.
    candidate = hours === 0 ? "UTC" : `Etc/GMT${offset[1] === "+" ? "-" : "+"}${hours}`;
  }
  try {
    const resolved = new Intl.DateTimeFormat("en-US", { timeZone: candidate }).resolvedOptions().timeZone;
    // ICU canonicalises some names backwards (Asia/Kolkata → Asia/Calcutta): keep the valid name the model used.
    return resolved.toLowerCase() === candidate.toLowerCase() ? resolved : candidate;
  } catch {
    throw new ToolError(
      `unknown timezone "${name}": use an IANA name like "Asia/Shanghai", "Europe/London" or "America/New_York", or leave it out`,
    );
  }
}

/** Zones whose formatters are kept: one costs about a millisecond to build, and the prompt needs one per request. */
const MAX_CACHED_ZONES = 64;
const formatters = new Map<string, { parts: Intl.DateTimeFormat; local: Intl.DateTimeFormat }>();

/** The two formatters of a zone, built once (throws RangeError for an unknown zone). */
function formattersOf(timeZone: string): { parts: Intl.DateTimeFormat; local: Intl.DateTimeFormat } {
  let f = formatters.get(timeZone);
  if (!f) {
    f = {
      parts: new Intl.DateTimeFormat("en-US", {
        timeZone,
        year: "numeric",
        month: "2-digit",
        day: "2-digit",
        hour: "2-digit",
        minute: "2-digit",
        second: "2-digit",
        hourCycle: "h23",
        weekday: "long",
        timeZoneName: "longOffset",
      }),
      local: new Intl.DateTimeFormat("en-GB", { timeZone, dateStyle: "full", timeStyle: "medium", hourCycle: "h23" }),
    };
    if (formatters.size >= MAX_CACHED_ZONES) formatters.clear();
    formatters.set(timeZone, f);
  }
  return f;
}

/** The moment `date` as seen in `timeZone`. */
export function describeTime(date: Date, timeZone: string): TimeReport {
  const f = formattersOf(timeZone);
  const parts = Object.fromEntries(f.parts.formatToParts(date).map((p) => [p.type, p.value])) as Record<string, string>;
  // "GMT+08:00" → "+08:00"; plain "GMT" means zero offset.
  const gmt = parts.timeZoneName ?? "GMT";
  const utcOffset = gmt === "GMT" ? "+00:00" : gmt.replace(/^GMT/, "");
  return {
    timezone: timeZone,
    iso: `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}:${parts.second}${utcOffset}`,
    local: f.local.format(date),
    weekday: parts.weekday ?? "",
    utc_offset: utcOffset,
  };
}
