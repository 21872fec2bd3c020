/**
 * Whether a Discord message is meant for the bot, and its text with the bot's mention taken out. In a server
 * the bot is addressed by a mention of its user or its managed role (the client's autocomplete offers both).
 */
import { cleanContent, MessageReferenceType, type Message } from "discord.js";
import { cutText } from "../../shared/text-cut.js";

/** The bot's managed role in the message's guild, if the cache knows it. */
function botRoleId(message: Message, botId: string): string | undefined {
  return message.guild?.roles.cache.find((role) => role.tags?.botId === botId)?.id;
}

/** True when the text mentions the bot's user or its managed role (a reply's automatic ping does not count). */
export function mentionsBot(message: Message, botId: string): boolean {
  if (message.content.includes(`<@${botId}>`) || message.content.includes(`<@!${botId}>`)) return true;
  const roleId = botRoleId(message, botId);
  return roleId !== undefined && message.content.includes(`<@&${roleId}>`);
}

/** The message this one replies to, from the cache (Discord sends it along) or fetched; undefined if gone. */
export async function referencedMessage(message: Message): Promise<Message | undefined> {
  const reference = message.reference;
  const id = reference?.messageId;
  // A forward also carries a reference, but it is a quote from elsewhere, not a reply to us.
  if (!id || reference.type === MessageReferenceType.Forward || reference.channelId !== message.channelId)
    return undefined;
  const cached = message.channel.messages.cache.get(id);
  if (cached) return cached;
  try {
    return await message.fetchReference();
  } catch {
    // Deleted or inaccessible: then it is not a reply we can attribute to anyone.
    return undefined;
  }
}

/** The text for the model: bot mentions removed, other mentions turned into readable @names. */
export function textForModel(message: Message, botId: string): string {
  let text = message.content.replaceAll(`<@${botId}>`, " ").replaceAll(`<@!${botId}>`, " ");
  const roleId = botRoleId(message, botId);
  if (roleId) text = text.replaceAll(`<@&${roleId}>`, " ");
  return cleanContent(text, message.channel)
    .replace(/[ \t]{2,}/g, " ")
    .trim();
}

/** How the speaker is called in this channel: server nickname, then global display name, then username. */
export function speakerName(message: Message): string {
  return cutText(message.member?.displayName ?? message.author.displayName, 200) || message.author.username;
}
