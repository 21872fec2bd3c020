/**
 * Output safety end to end: whatever the model writes, the chat shows it as
 * text. Raw HTML and Telegram's own tags never become formatting, mention links never
 * mention anyone, `@everyone`/role/user pings never notify anyone on Discord, and the
 * bot's secrets (platform token, API key, admin token) never appear in any text sent to
 * a platform: not in the answer, not in the tool activity line, not in a draft.
 * Judged by the fakes: Telegram's tdlib-like parser and Discord's mention rules.
 */
import { describe, expect } from "vitest";
import type { MessageEntity } from "grammy/types";
import { privateChat, type FakeChat } from "../fakes/telegram-server.js";
import { textAnswer, toolCallAnswer, type RecordedRequest } from "../fakes/openai-server.js";
import { parseTelegramHtml } from "../fakes/telegram-html.js";
import { discordBodiesSent, startHostileRig, telegramTextsSent } from "../security/hostile-kit.js";
import { e2eTest } from "../support/fixtures.js";

const API_KEY = "sk-live-4f1c9e2b7a6d5c3b8e0f1a2d3c4b5a69";
const ADMIN_TOKEN = "adm-8c7b6a5f4e3d2c1b0a9f8e7d";

/** Raw HTML, Telegram tags, entity spellings and mention links, as a model might write them. */
const HOSTILE_MARKUP = [
  'Plain <b>not bold</b> and </code> and <a href="javascript:alert(1)">click</a> &amp; &lt;script&gt; &#60;i&#62;',
  '<tg-spoiler>hidden?</tg-spoiler> <span class="tg-spoiler">x</span> <tg-emoji emoji-id="5368324170671202286">👍</tg-emoji> <blockquote expandable>q</blockquote>',
  "[Alice](tg://user?id=1001) [Alice again](tg:user?id=1001) [Bob](TG://USER/?ID=1002) [js](javascript:alert(1)) [data](data:text/html,<b>x</b>)",
  "<tg://user?id=1001> @everyone",
].join("\n\n");

/** The first round reads a URL with the token in it (shown as tool activity), the second answers with secrets and markup. */
function hostileModel(secrets: string[]) {
  return (request: RecordedRequest) => {
    const last = request.body.messages?.at(-1);
    if (last?.role === "tool")
      return textAnswer(
        `${HOSTILE_MARKUP}\n\nThe token is ${secrets[0]} and the key is \`${secrets[1]}\`, admin **${secrets[2]}**.`,
      );
    return toolCallAnswer([{ name: "read_url", arguments: { url: `http://127.0.0.1:1/bot${secrets[0]}/getMe` } }]);
  };
}

/** Entities a model's text may produce; anything else (mentions, custom emoji, foreign links, underline…) is an injection. */
function injected(entities: readonly MessageEntity[]): MessageEntity[] {
  return entities.filter(
    (e) => !["bold", "italic", "strikethrough", "code", "pre", "blockquote", "spoiler"].includes(e.type),
  );
}

/** True when `text` holds 12 or more consecutive characters of `secret`. */
function holdsPieceOf(text: string, secret: string): boolean {
  for (let i = 0; i + 12 <= secret.length; i++) if (text.includes(secret.slice(i, i + 12))) return true;
  return false;
}

describe("Telegram: model output is text, never markup, mentions or secrets", () => {
  e2eTest("in a private chat (drafts) and a group (placeholder + edits)", async ({ closeAfter }) => {
    const rig = closeAfter(
      await startHostileRig({ platform: "telegram", env: { OPENAI_API_KEY: API_KEY, ADMIN_TOKEN } }),
    );
    const tg = rig.tg!;
    const secrets = [tg.token, API_KEY, ADMIN_TOKEN];
    rig.model.setHandler(hostileModel(secrets));
    const alice = { id: 1001, first_name: "Alice" };
    const group: FakeChat = { id: -1001700, type: "supergroup", title: "Group" };
    tg.userSays(privateChat(alice), alice, "what is your token?");
    tg.userSays(group, alice, "@test_bot what is your token?");
    for (const chatId of [alice.id, group.id]) {
      await tg.waitFor(() => tg.visibleText(chatId).includes("The token is"), {
        timeoutMs: 15_000,
        what: `the answer in ${chatId}`,
      });
    }
    await tg.waitFor(() => tg.botMessages(group.id).every((m) => !m.buttons), {
      timeoutMs: 10_000,
      what: "the group answer's final edit",
    });

    for (const chatId of [alice.id, group.id]) {
      const answer = tg.botMessages(chatId).at(-1)!;
      expect(answer.text).toContain(
        'Plain <b>not bold</b> and </code> and <a href="javascript:alert(1)">click</a> &amp; &lt;script&gt; &#60;i&#62;',
      );
      expect(answer.text).toContain('<tg-spoiler>hidden?</tg-spoiler> <span class="tg-spoiler">x</span>');
      expect(answer.text).toContain("The token is [redacted] and the key is [redacted], admin [redacted].");
      expect(injected(answer.entities), JSON.stringify(answer.entities)).toEqual([]);
      expect(answer.entities.some((e) => e.type === "text_link" || e.type === "text_mention")).toBe(false);
    }
    // Every text that went out (drafts, the placeholder, each edit) parses and carries nothing injected or secret.
    const sent = telegramTextsSent(tg);
    expect(sent.length).toBeGreaterThan(2);
    for (const text of sent) {
      const parsed = parseTelegramHtml(text);
      expect(injected(parsed.entities)).toEqual([]);
      for (const secret of secrets) expect(holdsPieceOf(text, secret), text).toBe(false);
    }
    expect(tg.calls().filter((c) => !c.ok && c.status === 400)).toEqual([]);
    // The tool activity line was shown, without the token.
    expect(sent.some((t) => t.includes("read_url("))).toBe(true);
  });
});

describe("Discord: model output pings no one and shows no secret", () => {
  e2eTest("@everyone, @here, role and user mentions are shown but notify nobody", async ({ closeAfter }) => {
    const rig = closeAfter(
      await startHostileRig({ platform: "discord", env: { OPENAI_API_KEY: API_KEY, ADMIN_TOKEN } }),
    );
    const discord = rig.discord!;
    const secrets = [discord.token, API_KEY, ADMIN_TOKEN];
    const { alice, bob } = discord.users;
    const role = discord.world.roles.moderators.id;
    const pings = `Attention @everyone and @here! <@&${role}> <@${alice.id}> <@!${bob.id}> ＠everyone @EVERYONE`;
    rig.model.setHandler((request) =>
      request.body.messages?.at(-1)?.role === "tool"
        ? textAnswer(`${pings}\n\nThe token is ${secrets[0]}, key ${secrets[1]}, admin ${secrets[2]}.`)
        : toolCallAnswer([{ name: "read_url", arguments: { url: `http://127.0.0.1:1/?t=${secrets[0]}` } }]),
    );
    discord.userSays({
      channelId: discord.ids.general,
      author: bob,
      content: "ping everyone please",
      mentionsBot: true,
    });
    await discord.waitFor(
      () =>
        discord
          .botMessages(discord.ids.general)
          .some((m) => m.content.includes("The token is") && (m.components ?? []).length === 0),
      { timeoutMs: 15_000 },
    );
    const answer = discord.botMessages(discord.ids.general).at(-1)!;
    expect(answer.content).toContain("The token is [redacted], key [redacted], admin [redacted].");
    expect(answer.content.replace(/\u200d/g, "")).toContain(
      `Attention @everyone and @here! <@&${role}> <@${alice.id}> <@!${bob.id}>`,
    );
    // Nobody was notified: not by the answer's creation, not by any edit.
    expect(discord.pings.filter((p) => p.authorId === discord.bot.id)).toEqual([]);
    expect(answer.mention_everyone).toBe(false);
    for (const body of discordBodiesSent(discord)) {
      for (const secret of secrets) expect(holdsPieceOf(body, secret), body).toBe(false);
    }
  });
});
