/**
 * The schedule tools over a real schedule book (real Redis and BullMQ): the chat comes from the tool
 * context, the answer states the exact next time, list and cancel work by id, and refusals are one line.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { ToolConversation } from "../../src/contracts/tool-conversation.js";
import { createScheduleBook } from "../../src/schedules/schedule-book.js";
import { createScheduleTools } from "../../src/schedules/schedule-tools.js";
import { ToolError } from "../../src/tools/tool-error.js";
import { createTestRedis } from "../support/redis.js";

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

const alice: ToolConversation = {
  platform: "discord",
  conversationKey: "dc:500",
  chatId: "500",
  chatType: "group",
  guildId: "9",
  author: { id: "11", displayName: "Alice" },
  timeZone: "Asia/Shanghai",
};
const bob: ToolConversation = { ...alice, author: { id: "12", displayName: "Bob" } };

function tools(botAdmins: string[] = []) {
  const t = createTestRedis("schedtools");
  closers.push(() => t.cleanup());
  const book = createScheduleBook({ redis: t.redis, prefix: t.prefix, maxPerChat: 10, maxRuns: 100 });
  closers.push(() => book.close());
  const [schedule, list, cancel] = createScheduleTools({
    book,
    serverTimeZone: "UTC",
    isBotAdmin: (c) => botAdmins.includes(c.author.id),
  });
  const run = (tool: typeof schedule, args: unknown, conversation?: ToolConversation) =>
    tool!.execute(tool!.schema.parse(args), {
      signal: new AbortController().signal,
      ...(conversation ? { conversation } : {}),
    });
  return { schedule: schedule!, list: list!, cancel: cancel!, run };
}

async function refusal(p: Promise<unknown>): Promise<string> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ToolError);
  return (err as ToolError).message;
}

describe("schedule tools", () => {
  it("schedule, list and cancel in the chat of the context, times in the chat's zone", async () => {
    const t = tools();
    const made = (await t.run(t.schedule, { when: "in 2 hours", text: "water the plants" }, alice)) as {
      id: string;
      next: string;
    };
    expect(made.next).toMatch(/^\w{3} \d{4}-\d\d-\d\d \d\d:\d\d \(Asia\/Shanghai\)$/);
    expect(await t.run(t.list, {}, alice)).toEqual([
      { id: made.id, kind: "text", text: "water the plants", when: "once", next: made.next },
    ]);
    // Bob is not the author and not an admin.
    expect(await refusal(t.run(t.cancel, { id: made.id }, bob))).toBe(
      "only the schedule's author or an admin may cancel it",
    );
    expect(await t.run(t.cancel, { id: made.id }, alice)).toEqual({ cancelled: made.id });
    expect(await t.run(t.list, {}, alice)).toEqual([]);
    expect(await refusal(t.run(t.cancel, { id: made.id }, alice))).toBe(
      `no schedule ${made.id} in this chat; call list_schedules for the ids`,
    );
  });

  it("refuses a repeating schedule from a non-admin in a group, and works only in a chat", async () => {
    const t = tools(["12"]);
    expect(await refusal(t.run(t.schedule, { when: "every day at 8", text: "x" }, alice))).toBe(
      "In groups only admins may create repeating schedules.",
    );
    const byAdmin = (await t.run(t.schedule, { when: "every weekday at 08:00", text: "standup" }, bob)) as {
      repeats: string;
      next: string;
    };
    expect(byAdmin.repeats).toBe("every weekday at 08:00");
    expect(byAdmin.next).toMatch(/ 08:00 \(Asia\/Shanghai\)$/);
    expect(await refusal(t.run(t.list, {}))).toBe("schedules work only in a chat");
  });
});
