/** A thread per question (DISCORD_AUTO_THREAD); in a thread the bot started, every message is for the bot. */
import { ChannelType, type Message } from "discord.js";

/** The thread's name: the question on one line, within Discord's 100 characters (a cut ends with "…"). */
export function threadNameFor(text: string): string {
  const chars = [...text.replace(/\s+/g, " ").trim()];
  if (chars.length === 0) return "Question";
  return chars.length <= 100 ? chars.join("") : `${chars.slice(0, 99).join("").trimEnd()}…`;
}

/** True when the message is in a thread the bot started (follow-ups there need no mention). */
export function inBotThread(message: Message, botId: string): boolean {
  return message.channel.isThread() && message.channel.ownerId === botId;
}

/** True when a question here gets its own thread: a server text channel (not a thread, forum or DM). */
export function threadable(message: Message): boolean {
  return message.channel.type === ChannelType.GuildText || message.channel.type === ChannelType.GuildAnnouncement;
}
