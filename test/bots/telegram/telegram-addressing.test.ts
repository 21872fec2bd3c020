/** Edge cases of deciding whether a Telegram message is a question for the bot (pure, no network). */
import { describe, expect, it } from "vitest";
import type { Message } from "grammy/types";
import { classifyTelegramMessage } from "../../../src/bots/telegram/telegram-addressing.js";
import { detectEntities } from "../../fakes/telegram-server.js";

const me = { id: 42, username: "Helper_Bot" };
const user = { id: 7, is_bot: false, first_name: "Ann" };

function message(text: string, chat: "private" | "group", extra: Partial<Message> = {}): Message {
  return {
    message_id: 10,
    date: 0,
    chat:
      chat === "private" ? { id: 7, type: "private", first_name: "Ann" } : { id: -5, type: "supergroup", title: "G" },
    from: user,
    text,
    entities: detectEntities(text),
    ...extra,
  } as Message;
}

describe("classifyTelegramMessage", () => {
  it("matches the bot's username case-insensitively and cuts every mention", () => {
    expect(classifyTelegramMessage(message("@helper_bot: hi @HELPER_BOT there", "group"), me)).toEqual({
      kind: "question",
      text: "hi there",
    });
  });

  it("asks for a question when the bot is only mentioned, or /ask has nothing after it", () => {
    expect(classifyTelegramMessage(message("@Helper_Bot", "group"), me)).toEqual({ kind: "empty-question" });
    expect(classifyTelegramMessage(message("/ask@Helper_Bot   ", "group"), me)).toEqual({ kind: "empty-question" });
  });

  it("leaves other bots' commands and bare unknown commands in groups alone, but answers them in private", () => {
    expect(classifyTelegramMessage(message("/start@other_bot", "group"), me)).toEqual({
      kind: "ignore",
      reason: "other-bot-command",
    });
    expect(classifyTelegramMessage(message("/weather", "group"), me)).toEqual({
      kind: "ignore",
      reason: "unaddressed",
    });
    expect(classifyTelegramMessage(message("/weather", "private"), me)).toEqual({
      kind: "command",
      command: "unknown",
      name: "weather",
      args: "",
    });
    expect(classifyTelegramMessage(message("/RESET@helper_bot", "group"), me)).toEqual({
      kind: "command",
      command: "reset",
      name: "reset",
      args: "",
    });
  });

  it("hands the settings commands their arguments, in groups too", () => {
    expect(classifyTelegramMessage(message("/model@helper_bot  qwen3-4b ", "group"), me)).toEqual({
      kind: "command",
      command: "model",
      name: "model",
      args: "qwen3-4b",
    });
    expect(classifyTelegramMessage(message("/persona Talk like a pirate.", "private"), me)).toEqual({
      kind: "command",
      command: "persona",
      name: "persona",
      args: "Talk like a pirate.",
    });
    expect(classifyTelegramMessage(message("/tools", "group"), me)).toEqual({
      kind: "command",
      command: "tools",
      name: "tools",
      args: "",
    });
  });

  it("treats a private /ask like any question and ignores non-text messages", () => {
    expect(classifyTelegramMessage(message("/ask what time is it", "private"), me)).toEqual({
      kind: "question",
      text: "what time is it",
    });
    const video = {
      ...message("", "private"),
      text: undefined,
      caption: "look",
      video: { file_id: "v" },
    } as unknown as Message;
    expect(classifyTelegramMessage(video, me)).toEqual({ kind: "ignore", reason: "not-text" });
  });

  it("takes a photo's caption as the question, and a photo alone in private; in groups the caption must address the bot", () => {
    const photo = [{ file_id: "p", file_unique_id: "u", width: 800, height: 600, file_size: 50_000 }];
    const captioned = {
      ...message("", "private"),
      text: undefined,
      entities: undefined,
      caption: "what is this?",
      photo,
    } as Message;
    expect(classifyTelegramMessage(captioned, me)).toEqual({ kind: "question", text: "what is this?" });
    const bare = { ...message("", "private"), text: undefined, entities: undefined, photo } as Message;
    expect(classifyTelegramMessage(bare, me)).toEqual({ kind: "question", text: "" });
    const groupPhoto = (caption: string) =>
      ({
        ...message("", "group"),
        text: undefined,
        entities: undefined,
        caption,
        caption_entities: detectEntities(caption),
        photo,
      }) as Message;
    expect(classifyTelegramMessage(groupPhoto("nice view"), me)).toEqual({ kind: "ignore", reason: "unaddressed" });
    expect(classifyTelegramMessage(groupPhoto("@Helper_Bot what is in this picture?"), me)).toEqual({
      kind: "question",
      text: "what is in this picture?",
    });
    // "@bot" alone, under someone's photo: the photo is the question.
    const underPhoto = message("@Helper_Bot", "group", {
      reply_to_message: {
        ...message("", "group"),
        message_id: 9,
        text: undefined,
        photo,
      } as Message["reply_to_message"],
    });
    expect(classifyTelegramMessage(underPhoto, me)).toEqual({ kind: "question", text: "" });
  });

  it("does not take a message in a topic the bot created for a reply to the bot", () => {
    const topicStart = {
      message_id: 3,
      date: 0,
      chat: { id: -5, type: "supergroup", title: "G" },
      from: { id: 42, is_bot: true, first_name: "Helper" },
      forum_topic_created: { name: "T", icon_color: 1 },
    };
    const inTopic = message("just talking", "group", {
      message_thread_id: 3,
      is_topic_message: true,
      reply_to_message: topicStart as Message["reply_to_message"],
    });
    expect(classifyTelegramMessage(inTopic, me)).toEqual({ kind: "ignore", reason: "unaddressed" });
  });
});
