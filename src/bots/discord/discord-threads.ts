/**
 * A thread per question (DISCORD_AUTO_THREAD): a mention in a server text channel opens a public
 * thread on that message and the answer goes there; in a thread the bot started, every message is
 * for the bot (no mention needed), since the thread is its conversation.
 */
import { ChannelType, type Message } from "discord.js";

/** Discord's limit on a thread's name. */
const THREAD_NAME_MAX = 100;

/** The thread's name: the question on one line, at most 100 characters (a word cut ends with "…"). */
export function threadNameFor(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  if (line === "") return "Question";
  const chars = [...line];
  if (chars.length <= THREAD_NAME_MAX) return line;
  return `${chars
    .slice(0, THREAD_NAME_MAX - 1)
    .join("")
    .trimEnd()}…`;
}

/** True when the message is in a thread the bot started (follow-ups there need no mention). */
export function inBotThread(message: Message, botId: string): boolean {
  return message.channel.isThread() && message.channel.ownerId === botId;
}

/** True when a question here gets its own thread: a server text channel (not a thread, forum or DM). */
export function threadable(message: Message): boolean {
  return message.channel.type === ChannelType.GuildText || message.channel.type === ChannelType.GuildAnnouncement;
}
