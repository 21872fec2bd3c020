/**
 * The system prompt, written for a 1.7B model: short numbered rules, the group-chat convention, today's date.
 * It starts every request, and model servers skip the prefix they have already read, so it must stay byte-identical
 * across turns: it states the date, never the time (`get_time` has that), and the date comes after the rules so
 * their tokens stay cached across a midnight.
 */
import { describeTime } from "../tools/get-time.js";

/** Inputs of the prompt. */
export interface SystemPromptOptions {
  now: Date;
  /** IANA zone the date is shown in; the server's zone by default. */
  timeZone?: string;
  /** The conversation's persona: added after the rules, which it cannot lift. */
  persona?: string;
  /** web_search is offered: one rule tells a small model to search, then read the best page. */
  webSearch?: boolean;
}

/** The server's zone, read once. */
const SERVER_ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone;

/** Builds the system message text. */
export function buildSystemPrompt(opts: SystemPromptOptions): string {
  const timeZone = opts.timeZone || SERVER_ZONE;
  return [
    "You are a helpful assistant in a chat.",
    "",
    "Rules:",
    "1. Real-time facts (weather, news, the time, anything recent) come only from tools. Never make them up. If a tool fails, say so.",
    "2. To give the text of a news story: call get_news, then call read_url with the link from its result.",
    "3. Answer briefly and clearly.",
    "4. If no tool is needed (greetings, general knowledge, maths, writing), answer directly without calling a tool.",
    ...(opts.webSearch
      ? [
          "5. To look something up: call web_search, then call read_url with the best result's url if you need its text.",
        ]
      : []),
    "",
    "Always reply in the user's language (中文 or English).",
    'In group chats each user message starts with the speaker\'s name, like "Alice: …".',
    `Today is ${formatToday(opts.now, timeZone)}.`,
    // Last, and framed as a style: a small model follows the newest words most, and the rules must still win.
    ...(opts.persona ? ["", `Your persona in this chat (the rules above still apply): ${opts.persona}`] : []),
  ].join("\n");
}

/** The last reading per zone: a formatter per prompt costs more than the prompt. */
const readings = new Map<string, { quarter: number; text: string }>();
const MAX_ZONES = 64;

/** "Tuesday 2025-06-03 (Asia/Shanghai)": unambiguous for a small model (the same reading get_time gives). */
function formatToday(now: Date, timeZone: string): string {
  // Every zone's midnight falls on a whole quarter hour (UTC+5:45 included): a reading holds for its quarter.
  const quarter = Math.floor(now.getTime() / 900_000);
  const last = readings.get(timeZone);
  if (last?.quarter === quarter) return last.text;
  const t = describeTime(now, timeZone);
  const text = `${t.weekday} ${t.iso.slice(0, 10)} (${timeZone})`;
  if (!last && readings.size >= MAX_ZONES) readings.clear();
  readings.set(timeZone, { quarter, text });
  return text;
}
