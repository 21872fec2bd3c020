/**
 * The system prompt, written for a 1.7B model: short numbered rules in plain
 * words, the current date so "today" means something, and the group-chat
 * convention so the model can tell speakers apart.
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

/** The server's zone, read once (building a formatter per prompt costs more than the prompt). */
const SERVER_ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone;

/** Builds the system message text. */
export function buildSystemPrompt(opts: SystemPromptOptions): string {
  const timeZone = opts.timeZone ?? SERVER_ZONE;
  return [
    `You are a helpful assistant in a chat. Now it is ${formatNow(opts.now, timeZone)}.`,
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
    // Last, and framed as a style: a small model follows the newest words most, and the rules must still win.
    ...(opts.persona ? ["", `Your persona in this chat (the rules above still apply): ${opts.persona}`] : []),
  ].join("\n");
}

/** The last reading per zone: the prompt shows minutes, and every request of a minute builds the same one. */
const readings = new Map<string, { minute: number; text: string }>();
const MAX_ZONES = 64;

/** "Tuesday 2025-06-03 14:05 (Asia/Shanghai)": unambiguous for a small model (the same reading get_time gives). */
function formatNow(now: Date, timeZone: string): string {
  const minute = Math.floor(now.getTime() / 60_000);
  const last = readings.get(timeZone);
  if (last?.minute === minute) return last.text;
  const t = describeTime(now, timeZone);
  const text = `${t.weekday} ${t.iso.slice(0, 10)} ${t.iso.slice(11, 16)} (${timeZone})`;
  if (!last && readings.size >= MAX_ZONES) readings.clear();
  readings.set(timeZone, { minute, text });
  return text;
}
