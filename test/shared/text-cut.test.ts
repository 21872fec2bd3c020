/**
 * Every cut of user, page or model text keeps whole characters: a lone UTF-16 half makes the
 * model server refuse the whole request (strict JSON), so each cut the bot makes is checked here
 * at the point where the emoji straddles the limit.
 */
import { describe, expect, it } from "vitest";
import type { Message } from "discord.js";
import { cutText, cutTextWithMarker, wellFormed } from "../../src/shared/text-cut.js";
import { toUserMessage } from "../../src/answer/user-message.js";
import { telegramDisplayName } from "../../src/bots/telegram/telegram-inbound.js";
import { speakerName } from "../../src/bots/discord/discord-addressing.js";
import { createToolRunner } from "../../src/agent/tool-runner.js";
import { defineTool } from "../../src/tools/tool.js";
import { z } from "zod";
import { inboundMessage } from "../support/inbound-message.js";

const LONE_HALF = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
/** One letter then emoji: every even cut falls between the halves of an emoji. */
const odd = (n: number) => `a${"😀".repeat(n)}`;

describe("cutText", () => {
  it("never ends on the first half of an emoji, and stays within the limit", () => {
    for (let max = 0; max < 12; max++) {
      const cut = cutText(odd(10), max);
      expect(LONE_HALF.test(cut)).toBe(false);
      expect(cut.length).toBeLessThanOrEqual(max);
      expect(odd(10).startsWith(cut)).toBe(true);
    }
  });

  it("leaves short text alone and marks what it cut", () => {
    expect(cutText("héllo 🌍", 100)).toBe("héllo 🌍");
    expect(cutTextWithMarker(odd(3), 2, "…")).toBe("a…");
  });

  it("replaces halves already alone in the input", () => {
    expect(wellFormed("x\ud83dy\ude00")).toBe("x\ufffdy\ufffd");
  });
});

describe("the cuts of user and tool text", () => {
  it("the speaker name (64) and the quoted reply (300) keep whole emoji", () => {
    const message = toUserMessage(
      inboundMessage({
        chatType: "group",
        author: { id: "7", displayName: odd(60) },
        replyTo: { messageId: "0", authorName: odd(60), text: odd(400) },
      }),
    );
    expect(LONE_HALF.test(String(message.content))).toBe(false);
    expect(String(message.content)).toContain("a😀");
  });

  it("Telegram and Discord display names (200) keep whole emoji", () => {
    expect(LONE_HALF.test(telegramDisplayName({ id: 1, first_name: odd(150) }))).toBe(false);
    const discordMessage = {
      member: { displayName: odd(150) },
      author: { displayName: "x", username: "x" },
    } as unknown as Message;
    expect(LONE_HALF.test(speakerName(discordMessage))).toBe(false);
  });

  it("a tool's output cut at the observation cap keeps whole emoji", async () => {
    const tool = defineTool({
      name: "emoji",
      description: "emoji",
      schema: z.object({}),
      execute: async () => odd(100),
    });
    const runner = createToolRunner({ tools: [tool], defaultTimeoutMs: 1000, maxOutputChars: 50 });
    const outcome = await runner.run({ id: "c1", type: "function", function: { name: "emoji", arguments: "{}" } });
    expect(outcome.output).toMatch(/…\(truncated\)$/);
    expect(LONE_HALF.test(outcome.output)).toBe(false);
  });
});
