/**
 * `/remind` and `/schedules` for people: `/remind in 20 minutes stretch`, `/remind every weekday at 08:00 ask:
 * today's AI news` (an `ask:` text is answered by the model then), and the chat's list with a cancel button each.
 */
import type { ScheduleCommands } from "../contracts/schedule-commands.js";
import { SETTINGS_ACTION_PREFIX, type SettingsAnswer, type SettingsAsker } from "../contracts/settings-port.js";
import { short, type ScheduleBook, type ScheduleChat, type ScheduleRecord } from "./schedule-book.js";
import { describeInstant, parseWhen, WHEN_EXAMPLES } from "./schedule-when.js";

/** What the commands need. */
export interface ScheduleCommandsDeps {
  book: ScheduleBook;
  /** Whether the asker may make repeating schedules and cancel others' (private chat, chat or bot admin). */
  isAdmin(asker: SettingsAsker): Promise<boolean>;
  now?: () => Date;
}

const USAGE = `Use /remind <when> <text>, e.g. /remind in 20 minutes stretch, or /remind every weekday at 08:00 ask: today's AI news. When: ${WHEN_EXAMPLES}.`;

/** Creates the commands over the schedule book. */
export function createScheduleCommands(deps: ScheduleCommandsDeps): ScheduleCommands {
  const now = deps.now ?? (() => new Date());
  const line = (text: string): SettingsAnswer => ({ text, buttons: [], notice: text.slice(0, 190) });

  const listView = async (asker: SettingsAsker, timeZone: string, lead?: string): Promise<SettingsAnswer> => {
    const records = await deps.book.list(asker.conversationKey);
    const lines = await Promise.all(records.map(async (r) => describeRecord(r, await deps.book.next(r), timeZone)));
    return {
      text: [
        ...(lead ? [lead, ""] : []),
        records.length ? "Schedules here:" : "No schedules here. Add one with /remind <when> <text>.",
        ...lines,
      ].join("\n"),
      buttons: records.map((r) => [
        { label: `Cancel ${r.id}`, action: `${SETTINGS_ACTION_PREFIX}schedules cancel ${r.id}` },
      ]),
    };
  };

  return {
    async remind(asker, args, timeZone) {
      const split = splitWhen(args, now(), timeZone);
      if (!split) return line(args.trim() ? `Could not read a time at the start of that. ${USAGE}` : USAGE);
      const ask = /^(ask|prompt):\s*/i.exec(split.text);
      const result = await deps.book.create(
        {
          chat: chatOf(asker),
          author: { id: asker.userId, displayName: "scheduled" },
          timeZone,
          mayRepeat: () => deps.isAdmin(asker),
        },
        { when: split.when, text: ask ? split.text.slice(ask[0].length) : split.text, kind: ask ? "prompt" : "text" },
      );
      return result.ok ? { text: result.confirmation, buttons: [], notice: "Scheduled" } : line(result.problem);
    },
    async schedules(asker, args, timeZone) {
      const cancel = /^cancel\s+(\S+)$/i.exec(args.trim());
      if (!cancel)
        return listView(asker, timeZone, args.trim() ? "Use /schedules or /schedules cancel <id>." : undefined);
      const id = cancel[1]!;
      const record = await deps.book.get(asker.conversationKey, id);
      if (!record) return listView(asker, timeZone, `No schedule ${id} here.`);
      if (record.author.id !== asker.userId && !(await deps.isAdmin(asker)))
        return { ...line("🔒 Only its author or an admin of this chat can cancel that schedule."), refused: true };
      await deps.book.cancel(asker.conversationKey, id);
      return {
        ...(await listView(asker, timeZone, `✅ Cancelled ${id} (“${short(record.text)}”).`)),
        notice: "Cancelled",
      };
    },
  };
}

/**
 * The longest run of leading words that reads as a time, and the rest as the text ("in 5 minutes to
 * stretch" → "in 5 minutes" + "stretch"); undefined when no start reads as one.
 */
export function splitWhen(args: string, now: Date, timeZone: string): { when: string; text: string } | undefined {
  const words = args.trim().split(/\s+/);
  const starts = [];
  for (let n = Math.min(words.length - 1, 7); n >= 1; n--) {
    const when = words.slice(0, n).join(" ");
    const text = words
      .slice(n)
      .join(" ")
      .replace(/^(to|that|:)\s+/i, "");
    if (text) starts.push({ when, text, parsed: parseWhen(when, now, timeZone) });
  }
  // A start that reads as a time; else one that reads as a refused time (past, too often), so the refusal says why.
  return (
    starts.find((s) => s.parsed.kind !== "error") ??
    starts.find((s) => s.parsed.kind === "error" && !s.parsed.problem.startsWith("could not read"))
  );
}

/** The chat a conversation key names (`tg:<chat>[:<topic>]`, `dc:<channel>`, `term:<session>`). */
export function chatOf(asker: SettingsAsker): ScheduleChat {
  const [, chatId = asker.conversationKey, threadId] = asker.conversationKey.split(":");
  return {
    platform: asker.platform,
    conversationKey: asker.conversationKey,
    chatId,
    ...(threadId ? { threadId } : {}),
    chatType: asker.isPrivate ? "private" : "group",
  };
}

function describeRecord(r: ScheduleRecord, next: Date | undefined, timeZone: string): string {
  const what = r.kind === "prompt" ? `ask “${short(r.text)}”` : `“${short(r.text)}”`;
  const when = r.paused
    ? `${r.rule}, paused after ${r.failures} failures`
    : r.repeat
      ? `${r.rule}${next ? `, next ${describeInstant(next, timeZone)}` : ""}`
      : next
        ? `at ${describeInstant(next, timeZone)}`
        : "due now";
  return `• ${r.id}: ${what}, ${when}`;
}
