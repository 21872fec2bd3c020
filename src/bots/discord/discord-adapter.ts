/**
 * The Discord adapter: turns messages addressed to the bot into queued InboundMessages (the worker answers).
 * Commands, the Stop button and "Ask <bot>" are handled here because they must not wait in the queue.
 */
import {
  type ApplicationCommand,
  type ApplicationCommandData,
  ChannelType,
  Client,
  type Collection,
  Events,
  GatewayIntentBits,
  MessageFlags,
  Options,
  Partials,
  type Interaction,
  type Message,
  type MessageContextMenuCommandInteraction,
} from "discord.js";
import { pino, type Logger } from "pino";
import type { BotGateway, EnqueueResult } from "../../contracts/bot-gateway.js";
import { inboundMessageSchema, type AttachmentRef, type InboundMessage } from "../../contracts/inbound-message.js";
import { mentionsBot, referencedMessage, speakerName, textForModel } from "./discord-addressing.js";
import { cutText } from "../../shared/text-cut.js";
import type { MakeRequest } from "./discord-rest-client.js";
import {
  DISCORD_APPLICATION_COMMANDS,
  DISCORD_SETTINGS_COMMANDS,
  RESET_DONE_TEXT,
  UNAVAILABLE_TEXT,
  discordHelpText,
  isDiscordCommand,
  parseTextCommand,
  stopResultText,
  tooLongText,
  type DiscordCommand,
} from "./discord-commands.js";
import { STOP_BUTTON_ID } from "./discord-stop-button.js";
import type { SettingsPort } from "../../contracts/settings-port.js";
import { createDiscordSettingsUi } from "./discord-settings.js";
import { discordAttachments } from "./discord-attachments.js";
import { inBotThread, threadable, threadNameFor } from "./discord-threads.js";
import { STATUS_EMOJI } from "./discord-status-reactions.js";
import { holdsShardZero, type DiscordShardPlan } from "./discord-shards.js";
import { ASK_NOTES, askCommandFor, askQuestionText } from "./discord-ask.js";

/** What the Discord adapter needs: credentials, the queue seam, and the access rules from config. */
export interface DiscordAdapterOptions {
  token: string;
  /** Default: `createDiscordClient(apiBase)`. */
  client?: Client;
  apiBase: string;
  gateway: BotGateway;
  /** Without it the settings commands get the help text. */
  settings?: SettingsPort;
  /** Empty = all. When set, DMs are refused (they belong to no guild). */
  allowedGuilds: string[];
  /** Empty = all; a thread counts as its parent channel too. */
  allowedChannels: string[];
  maxInputChars: number;
  logger?: Pick<Logger, "debug" | "info" | "warn" | "error">;
  /** DISCORD_AUTO_THREAD: a question in a server channel gets a thread of its own. */
  autoThread?: boolean;
  /** STATUS_REACTIONS: 👀 on a queued question (the worker replaces it). */
  statusReactions?: boolean;
}

/** A running (or startable) Discord adapter. */
export interface DiscordAdapter {
  /** Resolves once the client is ready (rejects on a bad token or disallowed intents). */
  start(): Promise<void>;
  /** Waits for messages being enqueued, then disconnects. */
  stop(): Promise<void>;
  readonly client: Client;
}

/** The conversation key of a Discord channel (a thread is a channel; so is a DM). */
const discordConversationKey = (channelId: string): string => `dc:${channelId}`;

/**
 * Messages the client keeps per channel: only a replied-to message is read (a miss is fetched), and
 * discord.js' default of 200 would keep every channel's last 200, the bot's streamed answers included.
 */
export const DISCORD_CACHED_MESSAGES_PER_CHANNEL = 20;

/** The discord.js client the adapter needs: the intents it reads, DMs as partials, replies that ping no one, a small message cache. */
export function createDiscordClient(
  apiBase: string,
  opts: { makeRequest?: MakeRequest; shards?: DiscordShardPlan } = {},
): Client {
  return new Client({
    ...(opts.shards ? { shards: opts.shards.shards, shardCount: opts.shards.shardCount } : {}),
    intents: [
      GatewayIntentBits.Guilds,
      GatewayIntentBits.GuildMessages,
      GatewayIntentBits.MessageContent,
      GatewayIntentBits.DirectMessages,
    ],
    // DM channels are not cached before their first message: without this partial, DMs are dropped.
    partials: [Partials.Channel],
    makeCache: Options.cacheWithLimits({
      ...Options.DefaultMakeCacheSettings,
      MessageManager: DISCORD_CACHED_MESSAGES_PER_CHANNEL,
    }),
    sweepers: {
      ...Options.DefaultSweeperSettings,
      // Swept every 10 minutes, so a quiet channel holds none.
      messages: { interval: 600, lifetime: 30 * 60 },
    },
    rest: { api: apiBase, ...(opts.makeRequest ? { makeRequest: opts.makeRequest } : {}) },
    allowedMentions: { parse: [], repliedUser: false },
  });
}

/** Whether the registered commands match the wanted ones (as Discord stores them). */
function sameCommands(
  registered: Collection<string, ApplicationCommand>,
  wanted: readonly ApplicationCommandData[],
): boolean {
  return (
    registered.size === wanted.length &&
    wanted.every((command) => registered.find((r) => r.name === command.name)?.equals(command) === true)
  );
}

/** A question for the queue, answered in `channelId` (the message's channel or a thread on it). */
type Question = Pick<InboundMessage, "author" | "text" | "replyTo"> & {
  channelId: string;
  guildId: string | null;
  isDm: boolean;
  attachments: AttachmentRef[];
};

/** Creates the adapter; nothing connects before `start()`. */
export function createDiscordAdapter(options: DiscordAdapterOptions): DiscordAdapter {
  const { gateway, allowedGuilds, allowedChannels, maxInputChars } = options;
  const log = options.logger ?? pino({ level: "silent" });
  const client = options.client ?? createDiscordClient(options.apiBase);

  // One chain per channel: a conversation's messages are enqueued in Discord's order, even when one waits for Redis.
  const chains = new Map<string, Promise<void>>();
  const inChannelOrder = (channelId: string, work: () => Promise<void>): void => {
    const previous = chains.get(channelId) ?? Promise.resolve();
    const next = previous
      .then(work)
      .catch((error: unknown) => log.error({ err: error, channelId }, "discord: handling a message failed"));
    chains.set(channelId, next);
    void next.finally(() => {
      if (chains.get(channelId) === next) chains.delete(channelId);
    });
  };

  /** Whether the bot serves this guild and channel (or the thread's parent); channel undefined: not known. */
  const isAllowed = (guildId: string | null, channelId: string | undefined, parentId: string | null): boolean =>
    (allowedGuilds.length === 0 || (!!guildId && allowedGuilds.includes(guildId))) &&
    (allowedChannels.length === 0 || [channelId, parentId].some((id) => id && allowedChannels.includes(id)));

  const settingsUi = options.settings ? createDiscordSettingsUi(options.settings) : undefined;

  const botName = () => client.user?.displayName ?? "the bot";

  /**
   * Replies under a message, in the background: it waits for the channel's shared budget without holding up
   * the messages behind it. `counted`: the limiter itself refused it (already counted), or Redis is down.
   */
  const reply = async (message: Message, content: string, components?: unknown[], counted = false): Promise<void> => {
    void (async () => {
      try {
        // Counted against the user's per-minute limit: a flood of refused messages gets silence, not replies.
        if (!counted && gateway.mayReply && !(await gateway.mayReply("discord", message.author.id))) return;
        await gateway.replySlot?.("discord", message.channelId);
        await message.reply({
          content,
          allowedMentions: { parse: [], repliedUser: false },
          ...(components?.length ? { components: components as never } : {}),
        });
      } catch (error) {
        log.warn({ err: error, channelId: message.channelId }, "discord: could not reply");
      }
    })();
  };

  const runCommand = async (command: DiscordCommand, channelId: string, shared: boolean): Promise<string> => {
    const key = discordConversationKey(channelId);
    switch (command) {
      case "reset":
        await gateway.reset(key);
        return RESET_DONE_TEXT;
      case "compact":
        return gateway.compact ? gateway.compact(key, { shared }) : discordHelpText(botName());
      case "stop":
        return stopResultText(await gateway.stop(key));
      case "help":
        return discordHelpText(botName());
    }
  };

  const onMessage = async (message: Message): Promise<void> => {
    // Bots (this one included), webhooks and system messages (joins, pins, …) are never questions.
    if (message.author.bot || message.webhookId || message.system) return;
    const botId = client.user?.id;
    if (!botId || message.author.id === botId) return;
    const isDm = message.channel.type === ChannelType.DM;
    const parentId = message.channel.isThread() ? message.channel.parentId : null;
    if (!isAllowed(message.guildId, message.channelId, parentId)) {
      log.debug(
        { channelId: message.channelId, guildId: message.guildId },
        "discord: message outside the allowed guilds/channels",
      );
      return;
    }
    const referenced = message.reference ? await referencedMessage(message) : undefined;
    const addressed =
      isDm || mentionsBot(message, botId) || referenced?.author.id === botId || inBotThread(message, botId);
    if (!addressed) return;

    const text = textForModel(message, botId);
    // Pictures and files (this message's, or the replied-to one's) may carry the question without text.
    const attachments = discordAttachments(message, referenced);
    if (text === "" && attachments.length === 0) return;

    if (settingsUi && text !== "") {
      try {
        const key = discordConversationKey(message.channelId);
        if (await settingsUi.message(message, text, key, (content, components) => reply(message, content, components)))
          return;
      } catch (error) {
        log.error({ err: error }, "discord: settings command failed");
        await reply(message, UNAVAILABLE_TEXT, undefined, true);
        return;
      }
    }
    const command = text === "" ? undefined : parseTextCommand(text);
    if (command) {
      try {
        await reply(message, await runCommand(command === "unknown" ? "help" : command, message.channelId, !isDm));
      } catch (error) {
        log.error({ err: error, command }, "discord: command failed");
        await reply(message, UNAVAILABLE_TEXT, undefined, true);
      }
      return;
    }

    const length = [...text].length;
    if (length > maxInputChars) {
      await reply(message, tooLongText(length, maxInputChars));
      return;
    }

    // The answer goes where the conversation is: a new thread on the question, or the channel itself.
    const channelId = (await threadFor(message, text)) ?? message.channelId;
    const replyTo = referenced && {
      messageId: referenced.id,
      authorName: cutText(referenced.member?.displayName ?? referenced.author.displayName, 200),
      text: cutText(textForModel(referenced, botId), 4000),
    };
    const author = { id: message.author.id, displayName: speakerName(message) };
    const result = await enqueue(message, {
      channelId,
      guildId: message.guildId,
      isDm,
      author,
      text,
      replyTo,
      attachments,
    });
    if (result === "failed") {
      await reply(message, UNAVAILABLE_TEXT, undefined, true);
      return;
    }
    if (result?.status === "refused" && result.reason !== undefined)
      await reply(message, result.reason, undefined, true);
  };

  /** Whether questions in a channel get a thread: its own `/settings threads` choice, else DISCORD_AUTO_THREAD. */
  const threadsOn = async (channelId: string): Promise<boolean> => {
    try {
      return (await options.settings?.threads?.(discordConversationKey(channelId))) ?? options.autoThread ?? false;
    } catch (error) {
      log.warn({ err: error, channelId }, "discord: could not read the channel's thread setting, using the default");
      return options.autoThread ?? false;
    }
  };

  /** The thread a question is answered in (the message's own, or a new one); undefined: the channel. */
  const threadFor = async (message: Message, text: string): Promise<string | undefined> => {
    if (!threadable(message) || !(await threadsOn(message.channelId))) return undefined;
    if (message.thread) return message.thread.id;
    try {
      // Its own route bucket: no message slot of the channel is spent.
      return (await message.startThread({ name: threadNameFor(text) })).id;
    } catch (error) {
      log.warn(
        { err: error, channelId: message.channelId },
        "discord: could not open a thread, answering in the channel",
      );
      return undefined;
    }
  };

  /**
   * Queues `message` as a question answered in `channelId`, then shows the first signs of life.
   * "failed": the queue could not take it; undefined: it does not fit the payload.
   */
  const enqueue = async (
    message: Message,
    { channelId, guildId, isDm, author, text, replyTo, attachments }: Question,
  ): Promise<EnqueueResult | "failed" | undefined> => {
    const parsed = inboundMessageSchema.safeParse({
      platform: "discord",
      conversationKey: discordConversationKey(channelId),
      chatId: channelId,
      messageId: message.id,
      chatType: isDm ? "private" : "group",
      ...(guildId ? { guildId } : {}),
      author,
      text,
      ...(replyTo ? { replyTo } : {}),
      receivedAt: Date.now(),
      typingOnReceipt: true,
      ...(attachments.length > 0 ? { attachments } : {}),
    } satisfies InboundMessage);
    if (!parsed.success) {
      log.warn(
        { issues: parsed.error.issues, messageId: message.id },
        "discord: message does not fit the queue payload",
      );
      return undefined;
    }
    let result: EnqueueResult;
    try {
      result = await gateway.enqueue(parsed.data);
    } catch (error) {
      // Discord will not redeliver: the caller tells the user instead of dropping the question silently.
      log.error({ err: error, messageId: message.id }, "discord: enqueue failed");
      return "failed";
    }
    if (result.status !== "queued") return result;
    log.debug({ jobId: result.jobId, status: result.status }, "discord: message enqueued");
    const inThread = channelId !== message.channelId;
    // Cosmetic, nothing waits for it. No 👀 on a question answered in its own thread: the worker could not replace it.
    if (options.statusReactions && !inThread) {
      message
        .react(STATUS_EMOJI.queued)
        .catch((error: unknown) => log.debug({ err: error, messageId: message.id }, "discord: status reaction failed"));
    }
    const target = inThread ? message.thread : message.channel;
    if (target && "sendTyping" in target) {
      target
        .sendTyping()
        .catch((error: unknown) => log.debug({ err: error, channelId }, "discord: typing indicator failed"));
    }
    return result;
  };

  /** "Ask <bot>" on a message: the question is that message; the asker gets a private note. */
  const onAsk = async (interaction: MessageContextMenuCommandInteraction, isDm: boolean): Promise<void> => {
    // Discord allows 3 s before the first response; a thread or Redis may take longer.
    await interaction.deferReply({ flags: MessageFlags.Ephemeral });
    const note = (content: string) => interaction.editReply({ content, allowedMentions: { parse: [] } });
    const target = interaction.targetMessage;
    const botId = client.user?.id ?? "";
    const text = textForModel(target, botId);
    const attachments = discordAttachments(target, undefined);
    if (text === "" && attachments.length === 0) {
      await note(ASK_NOTES.empty);
      return;
    }
    const length = [...text].length;
    if (length > maxInputChars) {
      await note(tooLongText(length, maxInputChars));
      return;
    }
    const authorName = speakerName(target);
    const member = interaction.member;
    const askerName =
      cutText(member && "displayName" in member ? member.displayName : interaction.user.displayName, 200) ||
      interaction.user.username;
    const channelId = (await threadFor(target, text || authorName)) ?? interaction.channelId;
    // The answer replies to the chosen message; asking twice about one message is one question.
    const result = await enqueue(target, {
      channelId,
      guildId: interaction.guildId,
      isDm,
      author: { id: interaction.user.id, displayName: askerName },
      text: askQuestionText(authorName, text, attachments.length),
      attachments,
    });
    if (result === "failed" || result === undefined) await note(UNAVAILABLE_TEXT);
    else if (result.status === "queued")
      await note(channelId === interaction.channelId ? ASK_NOTES.queued : ASK_NOTES.inThread(channelId));
    else if (result.status === "duplicate") await note(ASK_NOTES.duplicate);
    else await note(result.reason ?? ASK_NOTES.refused);
  };

  const onInteraction = async (interaction: Interaction): Promise<void> => {
    if (interaction.isAutocomplete()) {
      if (settingsUi) await settingsUi.autocomplete(interaction);
      return;
    }
    if (!interaction.isButton() && !interaction.isChatInputCommand() && !interaction.isMessageContextMenuCommand())
      return;
    const channel = interaction.channel;
    const isDm = channel?.type === ChannelType.DM;
    // An uncached channel is refused when channels are limited: its parent is unknown.
    const parentId = channel?.isThread() ? channel.parentId : null;
    if (
      !interaction.channelId ||
      !isAllowed(interaction.guildId, channel ? interaction.channelId : undefined, parentId)
    ) {
      await interaction.reply({ content: "I am not available here.", flags: MessageFlags.Ephemeral });
      return;
    }
    const channelId = interaction.channelId;
    const key = discordConversationKey(channelId);
    if (interaction.isMessageContextMenuCommand()) {
      try {
        await onAsk(interaction, isDm);
      } catch (error) {
        log.error({ err: error, command: interaction.commandName }, "discord: Ask failed");
        if (interaction.deferred)
          await interaction
            .editReply({ content: UNAVAILABLE_TEXT })
            .catch((failure: unknown) => log.warn({ err: failure }, "discord: could not tell the asker"));
      }
      return;
    }
    if (interaction.isButton()) {
      if (settingsUi && (await settingsUi.button(interaction, key))) return;
      if (interaction.customId !== STOP_BUTTON_ID) return;
      // The worker's final edit removes the button.
      await interaction.deferUpdate();
      await gateway.stop(key);
      return;
    }
    try {
      if (settingsUi && (await settingsUi.command(interaction, key))) return;
    } catch (error) {
      log.error({ err: error, command: interaction.commandName }, "discord: settings command failed");
      if (!interaction.replied) await interaction.reply({ content: UNAVAILABLE_TEXT, flags: MessageFlags.Ephemeral });
      return;
    }
    const name = interaction.commandName;
    if (!isDiscordCommand(name)) return;
    // A summary takes longer than the 3 s Discord allows before the first response.
    const deferred = name === "compact";
    if (deferred) await interaction.deferReply({ flags: MessageFlags.Ephemeral });
    let content: string;
    try {
      content = await runCommand(name, channelId, !isDm);
    } catch (error) {
      log.error({ err: error, command: name }, "discord: command failed");
      content = UNAVAILABLE_TEXT;
    }
    if (deferred) await interaction.editReply({ content });
    else await interaction.reply({ content, flags: MessageFlags.Ephemeral });
  };

  client.on(Events.MessageCreate, (message) => inChannelOrder(message.channelId, () => onMessage(message)));
  client.on(Events.InteractionCreate, (interaction) => {
    onInteraction(interaction).catch((error: unknown) =>
      log.error({ err: error }, "discord: handling an interaction failed"),
    );
  });
  client.on(Events.Error, (error) => log.error({ err: error }, "discord: client error"));
  client.on(Events.ShardDisconnect, (event, shardId) =>
    log.warn({ code: event.code, shardId }, "discord: gateway disconnected"),
  );

  return {
    client,
    async start() {
      const ready = new Promise<void>((resolve) => client.once(Events.ClientReady, () => resolve()));
      await client.login(options.token);
      await ready;
      log.info({ user: client.user?.tag, guilds: client.guilds.cache.size }, "discord: connected");
      // Only by the process holding shard 0, and only when the set differs: a PUT on every start is how
      // bots earn a long 429 lockout.
      if (holdsShardZero(client)) {
        try {
          const wanted: ApplicationCommandData[] = [
            ...DISCORD_APPLICATION_COMMANDS,
            ...(settingsUi ? DISCORD_SETTINGS_COMMANDS : []),
            askCommandFor(botName()),
          ];
          const registered = await client.application?.commands.fetch();
          if (!registered || !sameCommands(registered, wanted)) await client.application?.commands.set(wanted);
          else log.debug("discord: application commands already registered");
        } catch (error) {
          // Text commands still work; slash commands are a convenience.
          log.warn({ err: error }, "discord: could not register application commands");
        }
      }
    },
    async stop() {
      await Promise.allSettled([...chains.values()]);
      await client.destroy();
    },
  };
}
