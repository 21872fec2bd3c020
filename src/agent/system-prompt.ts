/**
 * The system prompt, written for a 1.7B model: short numbered rules in plain
 * words, the current date so "today" means something, and the group-chat
 * convention so the model can tell speakers apart.
 */

/** Inputs of the prompt. */
export interface SystemPromptOptions {
  now: Date;
  /** IANA zone the date is shown in; the server's zone by default. */
  timeZone?: string;
}

/** Builds the system message text. */
export function buildSystemPrompt(opts: SystemPromptOptions): string {
  const timeZone = opts.timeZone ?? Intl.DateTimeFormat().resolvedOptions().timeZone;
  return [
    `You are a helpful assistant in a chat. Now it is ${formatNow(opts.now, timeZone)}.`,
    "",
    "Rules:",
    "1. Real-time facts (weather, news, the time, anything recent) come only from tools. Never make them up. If a tool fails, say so.",
    "2. To give the text of a news story: call get_news, then call read_url with the link from its result.",
    "3. Answer briefly and clearly.",
    "4. If no tool is needed (greetings, general knowledge, maths, writing), answer directly without calling a tool.",
    "",
    "Always reply in the user's language (中文 or English).",
    'In group chats each user message starts with the speaker\'s name, like "Alice: …".',
  ].join("\n");
}

/** "Tuesday 2025-06-03 14:05 (Asia/Shanghai)": unambiguous for a small model. */
function formatNow(now: Date, timeZone: string): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat("en-GB", {
      timeZone,
      weekday: "long",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      hourCycle: "h23",
    })
      .formatToParts(now)
      .map((p) => [p.type, p.value]),
  ) as Record<string, string>;
  return `${parts.weekday} ${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute} (${timeZone})`;
}
