/**
 * What an incoming Telegram message asks of the bot: nothing, a command, or a question (its mention cut
 * out). Private chats: every text. Groups: an @mention, a reply to the bot, or `/ask`. A caption counts
 * as text, and with a file at hand (its own or the replied-to message's) the question may be empty.
 */
import type { Message, MessageEntity, User } from "grammy/types";
import { realReplyOf } from "./telegram-conversation.js";
import { SETTINGS_COMMANDS, type SettingsCommand } from "../../contracts/settings-port.js";
import { hasTelegramFiles } from "./telegram-attachments.js";

/** Commands the adapter answers itself, without the model. */
export type TelegramCommand = "start" | "help" | "reset" | "compact" | "stop" | SettingsCommand;

/** Why a message gets no reaction (for debug logs and tests). */
export type IgnoreReason =
  | "no-sender"
  | "from-bot"
  | "from-self"
  | "channel"
  | "not-text"
  | "empty"
  | "unaddressed"
  | "other-bot-command";

/** What a message asks of the bot. */
export type Addressing =
  | { kind: "ignore"; reason: IgnoreReason }
  /** `args`: the text after the command (e.g. the model name of `/model qwen3-4b`). */
  | { kind: "command"; command: TelegramCommand | "unknown"; name: string; args: string }
  /** Addressed to the bot (mention, `/ask`) with nothing to ask: answer with a hint. */
  | { kind: "empty-question" }
  | { kind: "question"; text: string };

/** The bot's own identity, as getMe returned it. */
export interface BotIdentity {
  id: number;
  username: string;
}

const KNOWN_COMMANDS = new Set<string>(["start", "help", "reset", "compact", "stop", ...SETTINGS_COMMANDS]);

/** Classifies one message (a `message` update; edits never reach here). */
export function classifyTelegramMessage(message: Message, me: BotIdentity): Addressing {
  const from = message.from;
  if (!from) return { kind: "ignore", reason: "no-sender" };
  if (from.id === me.id) return { kind: "ignore", reason: "from-self" };
  if (from.is_bot) return { kind: "ignore", reason: "from-bot" };
  if (message.chat.type === "channel") return { kind: "ignore", reason: "channel" };
  // A photo or document carries its text as a caption; a question may also be about the replied-to file.
  const files = hasTelegramFiles(message) || hasTelegramFiles(realReplyOf(message));
  // Media the bot cannot read (video, stickers) stay ignored, caption or not; voice notes count like photos.
  const text = message.text ?? (hasTelegramFiles(message) ? (message.caption ?? "") : undefined);
  if (text === undefined) return { kind: "ignore", reason: "not-text" };
  if (text.trim() === "" && !files) return { kind: "ignore", reason: "empty" };
  const entities = message.entities ?? message.caption_entities ?? [];
  const isPrivate = message.chat.type === "private";
  const asked = (question: string): Addressing =>
    question === "" && !files ? { kind: "empty-question" } : { kind: "question", text: question };

  const command = leadingCommand(text, entities);
  if (command) {
    if (command.target !== undefined && command.target.toLowerCase() !== me.username.toLowerCase()) {
      return { kind: "ignore", reason: "other-bot-command" };
    }
    if (command.name === "ask") {
      return asked(stripMentions(text.slice(command.length), shiftEntities(entities, command.length), me).trim());
    }
    const args = text.slice(command.length).trim();
    if (KNOWN_COMMANDS.has(command.name))
      return { kind: "command", command: command.name as TelegramCommand, name: command.name, args };
    // In a group a bare /command may be meant for another bot; only answer it when it names us.
    if (isPrivate || command.target !== undefined)
      return { kind: "command", command: "unknown", name: command.name, args };
    return { kind: "ignore", reason: "unaddressed" };
  }

  if (isPrivate) return { kind: "question", text: text.trim() };

  const mentioned = entities.some((e) => isMentionOfMe(text, e, me));
  const repliedToMe = realReplyOf(message)?.from?.id === me.id;
  if (!mentioned && !repliedToMe) return { kind: "ignore", reason: "unaddressed" };
  return asked(stripMentions(text, entities, me).trim());
}

function leadingCommand(
  text: string,
  entities: readonly MessageEntity[],
): { name: string; target?: string; length: number } | undefined {
  const first = entities.find((e) => e.type === "bot_command" && e.offset === 0);
  if (!first) return undefined;
  const raw = text.slice(1, first.length);
  const at = raw.indexOf("@");
  const name = (at === -1 ? raw : raw.slice(0, at)).toLowerCase();
  return at === -1 ? { name, length: first.length } : { name, target: raw.slice(at + 1), length: first.length };
}

function isMentionOfMe(text: string, e: MessageEntity, me: BotIdentity): boolean {
  if (e.type === "mention")
    return text.slice(e.offset, e.offset + e.length).toLowerCase() === `@${me.username.toLowerCase()}`;
  if (e.type === "text_mention") return (e as { user?: User }).user?.id === me.id;
  return false;
}

function shiftEntities(entities: readonly MessageEntity[], by: number): MessageEntity[] {
  return entities.filter((e) => e.offset >= by).map((e) => ({ ...e, offset: e.offset - by }));
}

/** Cuts every mention of the bot out of the text (entity offsets are UTF-16, like JS strings). */
function stripMentions(text: string, entities: readonly MessageEntity[], me: BotIdentity): string {
  const cuts = entities.filter((e) => isMentionOfMe(text, e, me)).sort((a, b) => b.offset - a.offset);
  let out = text;
  for (const e of cuts) {
    const before = out.slice(0, e.offset);
    let after = out.slice(e.offset + e.length);
    // "@bot, what time is it?" → "what time is it?"; "ask @bot now" → "ask now".
    if (before.trim() === "") after = after.replace(/^\s*[,:，：]/, "");
    out = /\s$/.test(before) && /^\s/.test(after) ? before + after.replace(/^\s+/, "") : before + after;
  }
  return out;
}
