/**
 * The model's side of schedules. The argument schema stays tiny for a 1.7B model (`when` is one string we read
 * ourselves); the chat comes from the tool's context, and every refusal is the one line the model passes on.
 */
import { z } from "zod";
import type { ToolConversation } from "../contracts/tool-conversation.js";
import { defineTool, type Tool } from "../tools/tool.js";
import { ToolError } from "../tools/tool-error.js";
import type { ScheduleBook } from "./schedule-book.js";
import { describeInstant } from "./schedule-when.js";

/** What the tools need. */
export interface ScheduleToolsDeps {
  book: ScheduleBook;
  /** The zone of chats that chose none. */
  serverTimeZone: string;
  /** In groups, whether this author may create repeating schedules (ADMIN_USER_IDS: a worker cannot ask the platform). */
  isBotAdmin(conversation: ToolConversation): boolean;
}

const scheduleArgs = z.object({
  when: z
    .string()
    .trim()
    .min(1, { message: "say when" })
    .max(100)
    .describe('e.g. "in 20 minutes", "tomorrow at 8", "every weekday at 08:00"'),
  text: z.string().trim().min(1, { message: "say what to post" }).max(1000),
  kind: z.enum(["text", "prompt"]).default("text").describe('"text": post it. "prompt": answer it then.'),
});

const cancelArgs = z.object({
  id: z.string().trim().min(1).max(20).describe("The schedule's id from list_schedules."),
});

function chatOf(conversation: ToolConversation | undefined): ToolConversation {
  if (!conversation) throw new ToolError("schedules work only in a chat");
  return conversation;
}

/** Builds the three schedule tools. */
export function createScheduleTools(deps: ScheduleToolsDeps): Tool[] {
  const zoneOf = (c: ToolConversation) => c.timeZone ?? deps.serverTimeZone;
  const scheduleMessage = defineTool({
    name: "schedule_message",
    description: "Post a message in this chat later, once or repeating (reminders). Returns when it runs.",
    schema: scheduleArgs,
    async execute({ when, text, kind }, ctx) {
      const c = chatOf(ctx.conversation);
      const result = await deps.book.create(
        {
          chat: {
            platform: c.platform,
            conversationKey: c.conversationKey,
            chatId: c.chatId,
            ...(c.threadId ? { threadId: c.threadId } : {}),
            chatType: c.chatType,
            ...(c.guildId ? { guildId: c.guildId } : {}),
          },
          author: c.author,
          timeZone: zoneOf(c),
          mayRepeat: async () => c.chatType === "private" || deps.isBotAdmin(c),
        },
        { when, text, kind },
      );
      if (!result.ok) throw new ToolError(result.problem);
      return {
        id: result.schedule.id,
        next: describeInstant(result.next, zoneOf(c)),
        repeats: result.schedule.repeat ? result.schedule.rule : "no",
        confirm: result.confirmation,
      };
    },
  });
  const listSchedules = defineTool({
    name: "list_schedules",
    description: "List this chat's schedules.",
    schema: z.object({}),
    async execute(_args, ctx) {
      const c = chatOf(ctx.conversation);
      const records = await deps.book.list(c.conversationKey);
      return Promise.all(
        records.map(async (r) => {
          const next = await deps.book.next(r);
          return {
            id: r.id,
            kind: r.kind,
            text: r.text,
            when: r.rule,
            next: next ? describeInstant(next, zoneOf(c)) : null,
            ...(r.paused ? { paused: true } : {}),
          };
        }),
      );
    },
  });
  const cancelSchedule = defineTool({
    name: "cancel_schedule",
    description: "Cancel a schedule by its id from list_schedules.",
    schema: cancelArgs,
    async execute({ id }, ctx) {
      const c = chatOf(ctx.conversation);
      const record = await deps.book.get(c.conversationKey, id);
      if (!record) throw new ToolError(`no schedule ${id} in this chat; call list_schedules for the ids`);
      if (c.chatType !== "private" && record.author.id !== c.author.id && !deps.isBotAdmin(c))
        throw new ToolError("only the schedule's author or an admin may cancel it");
      await deps.book.cancel(c.conversationKey, id);
      return { cancelled: id };
    },
  });
  return [scheduleMessage, listSchedules, cancelSchedule] as Tool[];
}
