/**
 * Names and quotes full of emoji, through the real stack: every cut the bot makes of user text
 * (the speaker name, the quoted reply) must keep whole characters. A cut between the two halves of
 * an emoji leaves `\ud83d` alone in the request JSON, which llama.cpp (and so the fake model)
 * refuses outright: the user would see "model unavailable" for every question.
 */
import { describe, expect } from "vitest";
import type { FakeChat, FakeUser } from "../fakes/telegram-server.js";
import { echoingModel, startHostileRig } from "../security/hostile-kit.js";
import { e2eTest } from "../support/fixtures.js";

const LONE_HALF = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const group: FakeChat = { id: -1009988776655, type: "supergroup", title: "Emoji club" };

describe("emoji cut in half never reaches the model", () => {
  e2eTest("a group member whose name is one letter and many emoji still gets an answer", async ({ closeAfter }) => {
    const rig = closeAfter(await startHostileRig({ platform: "telegram", env: { QUEUE_RETRY_BACKOFF_MS: "100" } }));
    const tg = rig.tg!;
    echoingModel(rig.model);
    // 1 + 2·40 UTF-16 units: the speaker cut at 64 units falls between the halves of an emoji.
    const emojiName: FakeUser = { id: 2001, first_name: `A${"😀".repeat(40)}` };
    tg.userSays(group, emojiName, "@test_bot how are you?");
    await tg.waitFor(() => tg.botMessages(group.id).some((m) => m.text.startsWith("answer to: A😀")), {
      timeoutMs: 10_000,
      what: "the answer",
    });
    expect(rig.model.requests.length).toBeGreaterThan(0);
    expect(rig.model.requests.every((r) => !LONE_HALF.test(JSON.stringify(r.body)))).toBe(true);
    expect(
      tg
        .botMessages(group.id)
        .map((m) => m.text)
        .join("\n"),
    ).not.toMatch(/unavailable/i);
  });

  e2eTest("a reply to a long emoji message is quoted with whole characters", async ({ closeAfter }) => {
    const rig = closeAfter(await startHostileRig({ platform: "telegram", env: { QUEUE_RETRY_BACKOFF_MS: "100" } }));
    const tg = rig.tg!;
    echoingModel(rig.model);
    const bob: FakeUser = { id: 2002, first_name: "Bob" };
    // 1 + 2·400 units: the quote cut at 300 units falls inside an emoji.
    const { message } = tg.userSays(group, bob, `x${"🎉".repeat(400)}`);
    tg.userSays(group, bob, "@test_bot what did I just send?", { replyTo: message.message_id as number });
    await tg.waitFor(() => tg.botMessages(group.id).some((m) => m.text.includes("what did I just send?")), {
      timeoutMs: 10_000,
      what: "the answer",
    });
    const last = rig.model.requests[rig.model.requests.length - 1]!;
    const turn = JSON.stringify(last.body.messages);
    expect(turn).toContain("replying to Bob");
    expect(LONE_HALF.test(turn)).toBe(false);
  });
});
