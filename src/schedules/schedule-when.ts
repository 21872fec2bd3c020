/**
 * The `when` of a schedule as a person or a 1.7B model writes it, read in the chat's time zone: a delay, a time or
 * a repeating rule. One short string is what a small model fills best; what the grammar does not know gets one line.
 */
import { isTimeZoneName } from "../shared/time-zone.js";

/** A schedule that fires once at `at`. */
export interface OnceWhen {
  kind: "once";
  at: Date;
}

/** A repeating schedule: a cron pattern read in `tz`, or a fixed interval. */
export interface RepeatWhen {
  kind: "repeat";
  /** Cron (minute hour day month weekday) in the chat's zone, or absent for an interval. */
  pattern?: string;
  /** Interval in minutes (for "every N minutes/hours"). */
  everyMinutes?: number;
  /** Words for the listing: "every weekday at 08:00". */
  label: string;
}

/** What a `when` means; or why it was not understood. */
export type ParsedWhen = OnceWhen | RepeatWhen | { kind: "error"; problem: string };

/** How to write a `when`, for the error line and the tool's description. */
export const WHEN_EXAMPLES = '"in 20 minutes", "tomorrow at 8", "18:30", "2026-12-24 09:00", "every weekday at 08:00"';

const UNIT_MS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const DAYS = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"];

/** Reads `when` at `now` in the IANA zone `timeZone`. */
export function parseWhen(when: string, now: Date, timeZone: string): ParsedWhen {
  const text = when.trim().toLowerCase().replace(/\s+/g, " ");
  const delay = /^(?:in )?(\d{1,5}) ?(seconds?|secs?|s|minutes?|mins?|m|hours?|hrs?|h|days?|d)$/.exec(text);
  if (delay) {
    const ms = Number(delay[1]) * UNIT_MS[delay[2]![0]!]!;
    if (ms <= 0) return { kind: "error", problem: "that time is now or past; give a time in the future" };
    return { kind: "once", at: new Date(now.getTime() + ms) };
  }
  if (text.startsWith("every ")) return parseRepeat(text.slice(6));

  const iso = /^(\d{4})-(\d{2})-(\d{2})[ t](\d{1,2}):(\d{2})$/.exec(text);
  if (iso) {
    const [y, mo, d, h, mi] = iso.slice(1).map(Number) as [number, number, number, number, number];
    return future(wallClockToInstant({ y, mo, d, h, mi }, timeZone), now);
  }
  const day = /^(?:(today|tomorrow) )?(?:at )?(.+?)(?: (today|tomorrow))?$/.exec(text);
  const clock = day ? parseClock(day[2]!) : undefined;
  if (day && clock) {
    const which = day[1] ?? day[3];
    const today = wallClockOf(now, timeZone);
    const base = { y: today.y, mo: today.mo, d: today.d + (which === "tomorrow" ? 1 : 0), ...clock };
    const at = wallClockToInstant(base, timeZone);
    // A bare "8:00" already past today means tomorrow's, as people mean it.
    if (!which && at.getTime() <= now.getTime())
      return { kind: "once", at: wallClockToInstant({ ...base, d: base.d + 1 }, timeZone) };
    return future(at, now);
  }
  return { kind: "error", problem: `could not read the time "${when.trim()}"; write it like ${WHEN_EXAMPLES}` };
}

function future(at: Date, now: Date): ParsedWhen {
  if (Number.isNaN(at.getTime())) return { kind: "error", problem: "that date does not exist" };
  if (at.getTime() <= now.getTime())
    return { kind: "error", problem: "that time is already past; give a time in the future" };
  return { kind: "once", at };
}

function parseRepeat(rule: string): ParsedWhen {
  const interval = /^(\d{1,4} )?(minutes?|mins?|hours?|hrs?)$/.exec(rule);
  if (interval) {
    const n = interval[1] ? Number(interval[1]) : 1;
    if (n < 1) return { kind: "error", problem: "a schedule repeats at most once a minute" };
    const minutes = interval[2]!.startsWith("h") ? n * 60 : n;
    const count = (n: number, unit: string) => (n === 1 ? unit : `${n} ${unit}s`);
    const unit = minutes % 60 === 0 ? count(minutes / 60, "hour") : count(minutes, "minute");
    return { kind: "repeat", everyMinutes: minutes, label: `every ${unit}` };
  }
  if (/^(\d+ )?(seconds?|secs?)$/.test(rule))
    return { kind: "error", problem: "a schedule repeats at most once a minute" };
  const daily = /^(day|weekday|weekend|monday|tuesday|wednesday|thursday|friday|saturday|sunday)s?(?: at)? (.+)$/.exec(
    rule,
  );
  const clock = daily ? parseClock(daily[2]!) : undefined;
  if (!daily || !clock)
    return {
      kind: "error",
      problem: `could not read the rule "every ${rule}"; write it like "every weekday at 08:00"`,
    };
  const which = daily[1]!;
  const weekdays =
    which === "day" ? "*" : which === "weekday" ? "1-5" : which === "weekend" ? "0,6" : String(DAYS.indexOf(which));
  const hhmm = `${String(clock.h).padStart(2, "0")}:${String(clock.mi).padStart(2, "0")}`;
  return { kind: "repeat", pattern: `${clock.mi} ${clock.h} * * ${weekdays}`, label: `every ${which} at ${hhmm}` };
}

/** "8", "08:00", "8:30", "8am", "8:30 pm", "20h" → hours and minutes; undefined for anything else. */
function parseClock(text: string): { h: number; mi: number } | undefined {
  const m = /^(\d{1,2})(?:[:.h](\d{2}))? ?(am|pm|h)?$/.exec(text.trim());
  if (!m) return undefined;
  let h = Number(m[1]);
  const mi = m[2] ? Number(m[2]) : 0;
  if (m[3] === "pm" && h < 12) h += 12;
  if (m[3] === "am" && h === 12) h = 0;
  if (h > 23 || mi > 59) return undefined;
  return { h, mi };
}

interface WallClock {
  y: number;
  mo: number;
  d: number;
  h: number;
  mi: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** The calendar date and time `instant` shows in `timeZone`. */
function wallClockOf(instant: Date, timeZone: string): WallClock & { s: number } {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
    formatters.set(timeZone, f);
  }
  const parts = Object.fromEntries(f.formatToParts(instant).map((p) => [p.type, p.value]));
  return {
    y: Number(parts.year),
    mo: Number(parts.month),
    d: Number(parts.day),
    h: Number(parts.hour),
    mi: Number(parts.minute),
    s: Number(parts.second),
  };
}

/** The instant a wall-clock time in `timeZone` names (overflowing days roll over, as Date.UTC does). */
export function wallClockToInstant(c: WallClock, timeZone: string): Date {
  const asUtc = Date.UTC(c.y, c.mo - 1, c.d, c.h, c.mi);
  // The zone's offset at that moment, found by reading the guess back; twice, for a DST boundary between.
  let guess = asUtc;
  for (let i = 0; i < 2; i++) {
    const seen = wallClockOf(new Date(guess), timeZone);
    const seenUtc = Date.UTC(seen.y, seen.mo - 1, seen.d, seen.h, seen.mi, seen.s);
    guess += asUtc - seenUtc;
  }
  return new Date(guess);
}

/** True for a zone name Intl knows ("Asia/Shanghai", "UTC"). */
export const isTimeZone = isTimeZoneName;

/** "Fri 2026-12-05 08:00 (Asia/Shanghai)": the exact instant as the chat reads it. */
export function describeInstant(at: Date, timeZone: string): string {
  const c = wallClockOf(at, timeZone);
  const weekday = new Intl.DateTimeFormat("en-US", { timeZone, weekday: "short" }).format(at);
  const two = (n: number) => String(n).padStart(2, "0");
  return `${weekday} ${c.y}-${two(c.mo)}-${two(c.d)} ${two(c.h)}:${two(c.mi)} (${timeZone})`;
}
