/** Telegram chat admins through the real grammY Api against the fake Bot API: statuses, the brief cache, failed lookups. */
import { Api } from "grammy";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createChatAdminCheck } from "../../../src/bots/telegram/telegram-chat-admins.js";
import { startFakeTelegram, type FakeChat, type FakeTelegram, type FakeUser } from "../../fakes/telegram-server.js";

const group: FakeChat = { id: -1004444, type: "supergroup", title: "G" };
const owner: FakeUser = { id: 1, first_name: "Olga" };
const admin: FakeUser = { id: 2, first_name: "Adam" };
const member: FakeUser = { id: 3, first_name: "Mia" };

let tg: FakeTelegram;
beforeEach(async () => {
  tg = await startFakeTelegram();
  tg.addChat(group);
  tg.setMemberStatus(group.id, owner, "creator");
  tg.setMemberStatus(group.id, admin, "administrator");
  tg.setMemberStatus(group.id, member, "member");
});
afterEach(async () => {
  await tg.close();
});

describe("Telegram chat admin check", () => {
  it("creators and administrators are admins, members are not; an answer is reused until it expires", async () => {
    let now = 0;
    const warnings: string[] = [];
    const isAdmin = createChatAdminCheck({
      api: new Api(tg.token, { apiRoot: tg.apiRoot }),
      ttlMs: 60_000,
      now: () => now,
      logger: { warn: (_o, m) => warnings.push(String(m)) },
    });
    expect([
      await isAdmin(group.id, owner.id),
      await isAdmin(group.id, admin.id),
      await isAdmin(group.id, member.id),
    ]).toEqual([true, true, false]);
    expect(await isAdmin(group.id, member.id)).toBe(false);
    expect(tg.calls("getChatMember")).toHaveLength(3);

    // Promoted meanwhile: the cached "no" holds for its minute, then Telegram is asked again.
    tg.setMemberStatus(group.id, member, "administrator");
    now = 59_000;
    expect(await isAdmin(group.id, member.id)).toBe(false);
    now = 61_000;
    expect(await isAdmin(group.id, member.id)).toBe(true);
    expect(tg.calls("getChatMember")).toHaveLength(4);

    // A user Telegram does not know in the chat: not an admin, logged, and not cached.
    expect(await isAdmin(group.id, 99)).toBe(false);
    expect(await isAdmin(group.id, 99)).toBe(false);
    expect(tg.calls("getChatMember").filter((c) => Number(c.params.user_id) === 99)).toHaveLength(2);
    expect(warnings).toEqual([
      "getChatMember failed; treating the user as not an admin",
      "getChatMember failed; treating the user as not an admin",
    ]);
  });
});
