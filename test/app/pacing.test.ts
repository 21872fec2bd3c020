import { Api } from "grammy";
import { describe, expect, it } from "vitest";
import { pacingGlobalFor, pacingIntervalFor, pacingLocalOnly } from "../../src/app/pacing.js";
import {
  TELEGRAM_DRAFT_INTERVAL_MS,
  TELEGRAM_GLOBAL_PER_SECOND,
  TELEGRAM_GROUP_EDIT_INTERVAL_MS as TELEGRAM_GROUP_INTERVAL_MS,
  TELEGRAM_PRIVATE_EDIT_INTERVAL_MS as TELEGRAM_PRIVATE_INTERVAL_MS,
} from "../../src/bots/telegram/telegram-pacing.js";
import { chatPacingKey, draftPacingKey } from "../../src/contracts/platform-pacing.js";
import { createTelegramReplyPortFactory } from "../../src/bots/telegram/telegram-reply-port.js";
import type { InboundMessage } from "../../src/contracts/inbound-message.js";
import { inboundMessage } from "../support/inbound-message.js";

describe("which lanes are paced in the process alone", () => {
  it("drafts are (only the process answering the chat writes them); message lanes, shared with other processes, are not", () => {
    expect(pacingLocalOnly(draftPacingKey(chatPacingKey("telegram", "1001")))).toBe(true);
    expect(pacingLocalOnly(chatPacingKey("telegram", "1001"))).toBe(false);
    expect(pacingLocalOnly(chatPacingKey("telegram", "-100200"))).toBe(false);
    expect(pacingLocalOnly(chatPacingKey("discord", "123456789012345678"))).toBe(false);
  });
});

describe("pacing of drafts", () => {
  const interval = pacingIntervalFor();
  const privateChat = chatPacingKey("telegram", "1001");
  const group = chatPacingKey("telegram", "-100200");

  it("paces a private chat's drafts a few times a second, its messages at Telegram's one per 1.1 s", () => {
    expect(interval(draftPacingKey(privateChat))).toBe(TELEGRAM_DRAFT_INTERVAL_MS);
    expect(TELEGRAM_DRAFT_INTERVAL_MS).toBeLessThanOrEqual(300); // freshness target: a word visible within 400 ms
    expect(interval(privateChat)).toBe(TELEGRAM_PRIVATE_INTERVAL_MS);
    expect(interval(group)).toBe(TELEGRAM_GROUP_INTERVAL_MS);
  });

  it("draws drafts on no bot-wide budget (Telegram documents none), so the messages keep all of its 30 per second", () => {
    const messages = pacingGlobalFor(privateChat);
    expect(messages).toEqual({ key: "telegram", perSecond: TELEGRAM_GLOBAL_PER_SECOND });
    expect(pacingGlobalFor(group)).toEqual(messages);
    expect(pacingGlobalFor(draftPacingKey(privateChat))).toBeUndefined();
  });
});

describe("Telegram port limits", () => {
  const api = new Api("123:token", { apiRoot: "http://127.0.0.1:9" }); // never called: only the limits are read
  const message = (chatType: "private" | "group", chatId: string): InboundMessage =>
    inboundMessage({ chatType, chatId, receivedAt: 0 });

  it("advertises the draft interval the gate uses, only where drafts are streamed", () => {
    const withDrafts = createTelegramReplyPortFactory({ api, useDrafts: true });
    expect(withDrafts(message("private", "1001")).limits).toEqual({
      maxLength: 4096,
      minEditIntervalMs: TELEGRAM_PRIVATE_INTERVAL_MS,
      draftIntervalMs: TELEGRAM_DRAFT_INTERVAL_MS,
    });
    expect(withDrafts(message("group", "-100200")).limits.draftIntervalMs).toBeUndefined();
    expect(
      createTelegramReplyPortFactory({ api, useDrafts: false })(message("private", "1001")).limits.draftIntervalMs,
    ).toBeUndefined();
  });
});
