/**
 * Per-conversation settings in Telegram, end to end (fake Bot API in strict flood mode, a fake
 * model server listing several models, real Redis, bots + worker roles in-process): what a chat
 * chooses with /model, /think, /persona and the /tools buttons is what the next model request
 * carries; a group member who is not an admin is refused and changes nothing, an admin (by
 * getChatMember, or listed in ADMIN_USER_IDS) can; the settings survive /reset and a restart of
 * every role, and /settings reset brings the defaults back.
 */
import { describe, expect } from "vitest";
import { privateChat, type FakeChat, type FakeTelegram, type FakeUser } from "../fakes/telegram-server.js";
import { textAnswer } from "../fakes/openai-server.js";
import { settingsCarriedBy } from "../support/request-settings.js";
import { afterReading, expectNoFlood, sentHistory, type TelegramE2E } from "./telegram-harness.js";
import { e2eTest, type E2EFixtures } from "../support/fixtures.js";

const alice: FakeUser = { id: 1001, first_name: "Alice" };
const bob: FakeUser = { id: 1002, first_name: "Bob" };
const carol: FakeUser = { id: 1003, first_name: "Carol" };
const MODELS = ["qwen3-1.7b", "qwen3-4b", "qwen3-8b"];

/**
 * Starts the fakes and Redis with no roles, then the roles as a stack of their own, so that
 * `restartRoles` can stop every role and start it again on the same deployment.
 */
async function start(
  { startTelegram, startStack }: Pick<E2EFixtures, "startTelegram" | "startStack">,
  env: Record<string, string> = {},
): Promise<TelegramE2E & { restartRoles(): Promise<void> }> {
  const e2e = await startTelegram({ roles: [], model: { models: MODELS }, env });
  let roles = await startStack({ env: e2e.env, redis: e2e.stack.redis });
  return {
    ...e2e,
    async restartRoles() {
      await roles.close();
      roles = await startStack({ env: e2e.env, redis: e2e.stack.redis });
    },
  };
}

/** A user writes in a chat once the bot's last message there has been read; resolves with the bot's reply to it (`answer`: its final text). */
async function say(tg: FakeTelegram, chat: FakeChat, user: FakeUser, text: string, answer?: string) {
  await afterReading(tg, chat.id);
  const { message } = tg.userSays(chat, user, text);
  return tg.waitFor(
    () =>
      tg
        .botMessages(chat.id)
        .find((m) => m.replyToMessageId === message.message_id && (answer === undefined || m.text === answer)),
    { timeoutMs: 8000, what: `the reply to "${text}"` },
  );
}

describe("Telegram per-conversation settings, end to end", () => {
  e2eTest(
    "in a private chat the user's /model, /think, /persona and tool toggle reach the next request, and survive /reset and a restart",
    async ({ startTelegram, startStack }) => {
      const { tg, model, restartRoles } = await start({ startTelegram, startStack }, { ENABLE_THINKING: "false" });
      model.setHandler(() => textAnswer("Ahoy!"));
      const chat = privateChat(alice);

      // The command menu offers the settings commands.
      expect((tg.registeredCommands() as { command: string }[]).map((c) => c.command)).toEqual(
        expect.arrayContaining(["settings", "model", "think", "reasoning", "persona", "tools"]),
      );
      await say(tg, chat, alice, "hello", "Ahoy!");
      const before = settingsCarriedBy(model.requests[0]);
      expect(before).toMatchObject({
        model: "qwen3-1.7b",
        thinking: false,
        tools: [
          "cancel_schedule",
          "get_news",
          "get_time",
          "get_weather",
          "list_schedules",
          "read_url",
          "schedule_message",
        ],
      });
      expect(before.system).not.toMatch(/persona/i);

      // Without a name: the choices the server lists, one button each.
      const menu = await say(tg, chat, alice, "/model");
      expect(menu.text).toContain("Choose with the buttons or /model <name>: qwen3-1.7b, qwen3-4b, qwen3-8b");
      expect(menu.buttons?.flat().map((b) => b.callback_data)).toEqual([
        "cfg:model qwen3-1.7b",
        "cfg:model qwen3-4b",
        "cfg:model qwen3-8b",
      ]);

      expect((await say(tg, chat, alice, "/model qwen3-99b")).text).toContain(
        "Unknown model “qwen3-99b”. Choose one of: qwen3-1.7b, qwen3-4b, qwen3-8b.",
      );
      expect((await say(tg, chat, alice, "/model qwen3-4b")).text).toContain(
        "✅ Model here is now qwen3-4b. It applies from the next answer.",
      );
      expect((await say(tg, chat, alice, "/think on")).text).toContain("✅ Thinking is now on here.");
      expect((await say(tg, chat, alice, "/persona Talk like a pirate.")).text).toContain("✅ Persona set.");

      // /tools lists the tools by source; a press of get_weather's toggle edits the list in place.
      const tools = await say(tg, chat, alice, "/tools");
      expect(tools.text).toContain("built-in:\n✅ get_weather:");
      const toggle = tools.buttons?.flat().find((b) => b.text === "✅ get_weather");
      expect(toggle?.callback_data).toBe("cfg:tools off get_weather");
      await afterReading(tg, chat.id);
      const { queryId } = tg.userPresses(chat.id, alice, tools.messageId, toggle!.callback_data!);
      expect(await tg.waitFor(() => tg.callbackAnswer(queryId), { what: "the toggle's answer" })).toEqual({
        text: "get_weather: off",
      });
      const edited = await tg.waitFor(
        () => tg.botMessages(chat.id).find((m) => m.messageId === tools.messageId && m.text.includes("⛔ get_weather")),
        {
          what: "the tool list showing get_weather off",
        },
      );
      expect(edited.buttons?.flat().find((b) => b.text === "⛔ get_weather")?.callback_data).toBe(
        "cfg:tools on get_weather",
      );

      await say(tg, chat, alice, "hello again", "Ahoy!");
      const after = settingsCarriedBy(model.requests[1]);
      expect(after).toMatchObject({
        model: "qwen3-4b",
        thinking: true,
        tools: ["cancel_schedule", "get_news", "get_time", "list_schedules", "read_url", "schedule_message"],
      });
      expect(after.system).toContain("Your persona in this chat (the rules above still apply): Talk like a pirate.");
      // The small-model rules are still all there, before the persona.
      expect(after.system.indexOf("Rules:")).toBeLessThan(after.system.indexOf("Talk like a pirate."));

      const overview = await say(tg, chat, alice, "/settings");
      expect(overview.text).toContain(
        "• Model: qwen3-4b\n• Thinking: on\n• Reasoning shown: collapsed (default)\n• Persona: “Talk like a pirate.”\n• Tools: 6 of 7 on",
      );

      // /reset forgets the history, says the settings stay, and they do.
      expect((await say(tg, chat, alice, "/reset")).text).toBe(
        "🧹 Done: I forgot this conversation. Its settings stay (/settings reset restores the defaults).",
      );
      // Every role restarts: the settings are in Redis, not in a process.
      await restartRoles();
      await say(tg, chat, alice, "who are you?", "Ahoy!");
      expect(sentHistory(model.requests[2])).toEqual([{ role: "user", content: "who are you?" }]);
      expect(settingsCarriedBy(model.requests[2])).toMatchObject({
        model: "qwen3-4b",
        thinking: true,
        tools: ["cancel_schedule", "get_news", "get_time", "list_schedules", "read_url", "schedule_message"],
      });

      expect((await say(tg, chat, alice, "/settings reset")).text).toContain(
        "✅ Every setting is back to its default.",
      );
      await say(tg, chat, alice, "and now?", "Ahoy!");
      const reset = settingsCarriedBy(model.requests[3]);
      expect(reset).toMatchObject({
        model: "qwen3-1.7b",
        thinking: false,
        tools: [
          "cancel_schedule",
          "get_news",
          "get_time",
          "get_weather",
          "list_schedules",
          "read_url",
          "schedule_message",
        ],
      });
      expect(reset.system).not.toContain("pirate");
      expectNoFlood(tg);
    },
    60_000,
  );

  e2eTest(
    "in a group anyone may look, a member's /model is refused and changes nothing, an admin's and a bot-wide admin's work",
    async ({ startTelegram, startStack }) => {
      const { tg, model } = await start({ startTelegram, startStack }, { ADMIN_USER_IDS: `tg:${carol.id}` });
      model.setHandler(() => textAnswer("Hi all."));
      const group: FakeChat = { id: -1003333333333, type: "supergroup", title: "Team" };
      tg.addChat(group);
      tg.setMemberStatus(group.id, alice, "member");
      tg.setMemberStatus(group.id, bob, "administrator");
      tg.setMemberStatus(group.id, carol, "member");

      // Looking is for everyone.
      const overview = await say(tg, group, alice, "/settings");
      expect(overview.text).toContain("• Model: qwen3-1.7b (default)");
      expect(overview.text).toContain("Anyone can look; only admins of this chat can change these.");

      const refused = await say(tg, group, alice, "/model@test_bot qwen3-4b");
      expect(refused.text).toBe("🔒 Only admins of this chat can change its settings. Anyone can look with /settings.");
      // Her press of a button on the menu is refused too, with a toast, and the menu stays as it was.
      const { queryId } = tg.userPresses(group.id, alice, overview.messageId, "cfg:think off");
      expect(await tg.waitFor(() => tg.callbackAnswer(queryId), { what: "the refused press" })).toEqual({
        text: "Only admins can change settings here.",
      });
      expect(tg.botMessages(group.id).find((m) => m.messageId === overview.messageId)?.editCount).toBe(0);
      // getChatMember was asked once: the second check came from the cache.
      expect(tg.calls("getChatMember").map((c) => [Number(c.params.chat_id), Number(c.params.user_id)])).toEqual([
        [group.id, alice.id],
      ]);

      await say(tg, group, alice, "@test_bot hello", "Hi all.");
      expect(settingsCarriedBy(model.requests[0])).toMatchObject({ model: "qwen3-1.7b", thinking: true });

      expect((await say(tg, group, bob, "/model qwen3-4b")).text).toContain("✅ Model here is now qwen3-4b.");
      expect((await say(tg, group, carol, "/think off")).text).toContain("✅ Thinking is now off here.");
      await say(tg, group, alice, "@test_bot hello again", "Hi all.");
      expect(settingsCarriedBy(model.requests[1])).toMatchObject({ model: "qwen3-4b", thinking: false });
      // The group's choice is the group's: Alice's private chat still runs on the defaults.
      await say(tg, privateChat(alice), alice, "hi", "Hi all.");
      expect(settingsCarriedBy(model.requests[2])).toMatchObject({ model: "qwen3-1.7b", thinking: true });
      expectNoFlood(tg);
    },
    60_000,
  );
});
