/**
 * What happens on the fake's Discord that the bot did not do: a user posts a message (with a
 * mention of the bot, a reply, a webhook or a system type, as the client would send it), a
 * moderator deletes one or takes away the bot's Send Messages, and Discord fails on cue.
 */
import { MessageType, type APIMessage, type MessageFlags } from "discord.js";
import type { FakeDiscord } from "../discord-server.js";
import { parseMentions } from "./mentions.js";
import { referencedCopy, type MessageWriter } from "./message-writer.js";
import { guildOf, type DiscordState } from "./state.js";

/** The test's hands on the world (see FakeDiscord for each). */
export function createUserActions(
  state: DiscordState,
  { storeAndDispatch, removeMessage }: MessageWriter,
): Pick<FakeDiscord, "userSays" | "failNext" | "denySend" | "deleteMessage"> {
  const { channels, world, findMessage, nextId, now, users, failures, denied, changed } = state;
  return {
    userSays(opts) {
      const channel = channels.get(opts.channelId);
      if (!channel) throw new Error(`fake discord: unknown channel ${opts.channelId}`);
      const author = opts.author ?? world.users.alice;
      const inGuild = guildOf(channel) !== undefined;
      let content = opts.content;
      if (opts.mentionsBot && !content.includes(`<@${world.bot.id}>`) && !content.includes(`<@!${world.bot.id}>`)) {
        content = `<@${world.bot.id}> ${content}`;
      }
      const referenced = opts.replyTo ? findMessage(opts.channelId, opts.replyTo) : undefined;
      if (opts.replyTo && !referenced) throw new Error(`fake discord: no message ${opts.replyTo} in ${opts.channelId}`);
      const found = parseMentions(state, content, inGuild);
      const mentionUsers = [...found.users];
      if (referenced && opts.mentionRepliedUser !== false && !mentionUsers.includes(referenced.author.id))
        mentionUsers.push(referenced.author.id);
      const guildId = guildOf(channel);
      const message: APIMessage = {
        id: nextId(),
        channel_id: opts.channelId,
        author: opts.webhookId ? { ...author, bot: true } : author,
        content,
        timestamp: new Date(now()).toISOString(),
        edited_timestamp: null,
        tts: false,
        mention_everyone: found.everyone,
        mentions: mentionUsers.map((u) => users.get(u)!),
        mention_roles: found.roles,
        attachments: opts.attachments ?? [],
        embeds: [],
        pinned: false,
        type: opts.type ?? (referenced ? MessageType.Reply : MessageType.Default),
        flags: (opts.flags ?? 0) as MessageFlags,
        components: [],
        ...(opts.webhookId ? { webhook_id: opts.webhookId } : {}),
        ...(referenced
          ? {
              message_reference: {
                type: 0,
                channel_id: opts.channelId,
                message_id: referenced.id,
                ...(guildId ? { guild_id: guildId } : {}),
              },
              referenced_message: referencedCopy(referenced),
            }
          : {}),
      };
      storeAndDispatch(message);
      return message;
    },

    failNext(script) {
      failures.push({ ...script, left: script.times ?? 1 });
    },
    denySend(channelId) {
      denied.add(channelId);
    },
    deleteMessage(channelId, messageId) {
      if (!removeMessage(channelId, messageId))
        throw new Error(`fake discord: no message ${messageId} in ${channelId}`);
      changed();
    },
  };
}
