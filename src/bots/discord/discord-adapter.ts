/**
 * The Discord adapter: a discord.js client that turns messages addressed to the bot into
 * InboundMessages and enqueues them. It validates, enqueues and acknowledges; answering is the
 * worker's job (through the REST-only reply port). Commands (/reset, /compact, /stop, /help), the Stop
 * button and "Ask <bot>" (a message's Apps menu) are handled here because they must not wait in the queue.
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
  type TextBasedChannel,
} from "discord.js";
import { pino, type Logger } from "pino";
import type { BotGateway, EnqueueResult } from "../../contracts/bot-gateway.js";
import { inboundMessageSchema, type InboundMessage } from "../../contracts/inbound-message.js";
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
  /** The discord.js client to receive with (`createDiscordClient`); default: one for `apiBase`. */
  client?: Client;
  /** DISCORD_API_BASE (discord.js `rest.api`); the gateway URL then comes from GET /gateway/bot. */
  apiBase: string;
  gateway: BotGateway;
  /** The settings commands (/settings, /model, …); without it they get the help text. */
  settings?: SettingsPort;
  /** Guild ids the bot serves; empty = all. When set, DMs are refused (they belong to no guild). */
  allowedGuilds: string[];
  /** Channel ids the bot serves (a thread counts as its parent channel too); empty = all. */
  allowedChannels: string[];
  /** Longer messages get a polite refusal instead of being queued. */
  maxInputChars: number;
  logger?: Pick<Logger, "debug" | "info" | "warn" | "error">;
  /** DISCORD_AUTO_THREAD: a mention in a server channel opens a thread on it, where the answer goes. */
  autoThread?: boolean;
  /** STATUS_REACTIONS: 👀 on a question once it is queued (the worker replaces it with 🔧, ✅ or ⚠️). */
  statusReactions?: boolean;
  /** Register /reset, /compact, /stop, /help as application commands at start (default true). */
  registerCommands?: boolean;
  now?: () => number;
}

/** A running (or startable) Discord adapter. */
export interface DiscordAdapter {
  /** Logs in and resolves once the client is ready (rejects on a bad token or disallowed intents). */
  start(): Promise<void>;
  /** Waits for messages being enqueued, then disconnects. */
  stop(): Promise<void>;
  /** The underlying client (for logs and tests). */
  readonly client: Client;
}

/** The conversation key of a Discord channel (a thread is a channel; so is a DM). */
export function discordConversationKey(channelId: string): string {
  return `dc:${channelId}`;
}

/**
 * Messages the client keeps per channel. The adapter reads only the message a new one replies to,
 * which Discord sends along with it (and a miss is fetched); discord.js' default of 200 would keep
 * every channel's last 200 messages, the bot's streamed answers included, for as long as it runs.
 */
export const DISCORD_CACHED_MESSAGES_PER_CHANNEL = 20;
/** Cached messages older than this are swept (every 10 minutes), so a quiet channel holds none. */
const DISCORD_CACHED_MESSAGE_LIFETIME_S = 30 * 60;

/** The discord.js client the adapter needs: the intents it reads, DMs as partials, replies that ping no one, a small message cache. */
export function createDiscordClient(
  apiBase: string,
  opts: { makeRequest?: MakeRequest; shards?: DiscordShardPlan } = {},
): Client {
  return new Client({
    // discord.js's own sharding: one session per shard, identifies paced by max_concurrency.
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
      messages: { interval: 600, lifetime: DISCORD_CACHED_MESSAGE_LIFETIME_S },
    },
    // `makeRequest` (e.g. a metering one around REST's own) carries every REST call.
    rest: { api: apiBase, ...(opts.makeRequest ? { makeRequest: opts.makeRequest } : {}) },
    // The adapter's own replies (help, refusals) ping no one either.
    allowedMentions: { parse: [], repliedUser: false },
  });
}

/** Whether the registered commands match the wanted ones (names, kinds and options as Discord stores them). */
function sameCommands(
  registered: Collection<string, ApplicationCommand>,
  wanted: readonly ApplicationCommandData[],
): boolean {
  if (registered.size !== wanted.length) return false;
  return wanted.every((command) => {
    const found = registered.find((r) => r.name === command.name);
    return found?.equals(command) === true;
  });
}

/** Creates the adapter; nothing connects before `start()`. */
export function createDiscordAdapter(options: DiscordAdapterOptions): DiscordAdapter {
  const { gateway, allowedGuilds, allowedChannels, maxInputChars } = options;
  const log = options.logger ?? pino({ level: "silent" });
  const now = options.now ?? Date.now;

  // The client is the composition root's to build (createDiscordClient); a default one for callers that only have a token.
  const client = options.client ?? createDiscordClient(options.apiBase);

  // One chain per channel: messages of a conversation are enqueued in the order Discord sent them,
  // even when an earlier one waits longer for Redis.
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

  const isAllowed = (
    guildId: string | null,
    channel: { id: string; isThread(): boolean; parentId?: string | null } | null,
  ): boolean => {
    if (allowedGuilds.length > 0 && (!guildId || !allowedGuilds.includes(guildId))) return false;
    if (allowedChannels.length > 0) {
      if (!channel) return false;
      const ids = [channel.id, channel.isThread() ? channel.parentId : null];
      if (!ids.some((id) => id && allowedChannels.includes(id))) return false;
    }
    return true;
  };

  const settingsUi = options.settings ? createDiscordSettingsUi(options.settings) : undefined;

  /** Replies under a message; `counted`: the limiter itself refused it (already counted), or Redis is down. */
  const reply = async (message: Message, content: string, components?: unknown[], counted = false): Promise<void> => {
    // Waits for the channel's shared budget (an answer may be streaming there) without holding up
    // the messages behind it.
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
        return gateway.compact
          ? gateway.compact(key, { shared })
          : discordHelpText(client.user?.displayName ?? "the bot");
      case "stop":
        return stopResultText(await gateway.stop(key));
      case "help":
        return discordHelpText(client.user?.displayName ?? "the bot");
    }
  };

  /** Starts a thread on the question; undefined (answer in the channel) when Discord refuses. */
  const openThread = async (message: Message, text: string): Promise<string | undefined> => {
    try {
      // Its own route bucket (discord.js's REST queue paces it): no message slot of the channel is spent.
      const thread = await message.startThread({ name: threadNameFor(text) });
      return thread.id;
    } catch (error) {
      log.warn(
        { err: error, channelId: message.channelId },
        "discord: could not open a thread, answering in the channel",
      );
      return undefined;
    }
  };

  const onMessage = async (message: Message): Promise<void> => {
    // Bots (this one included), webhooks and system messages (joins, pins, …) are never questions.
    if (message.author.bot || message.webhookId || message.system) return;
    const botId = client.user?.id;
    if (!botId || message.author.id === botId) return;
    const isDm = message.channel.type === ChannelType.DM;
    if (!isAllowed(message.guildId, isDm ? { id: message.channelId, isThread: () => false } : message.channel)) {
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
    const candidate: InboundMessage = {
      platform: "discord",
      conversationKey: discordConversationKey(channelId),
      chatId: channelId,
      messageId: message.id,
      chatType: isDm ? "private" : "group",
      ...(message.guildId ? { guildId: message.guildId } : {}),
      author: { id: message.author.id, displayName: speakerName(message) },
      text,
      ...(referenced
        ? {
            replyTo: {
              messageId: referenced.id,
              authorName: cutText(referenced.member?.displayName ?? referenced.author.displayName, 200),
              text: cutText(textForModel(referenced, botId), 4000),
            },
          }
        : {}),
      receivedAt: now(),
      typingOnReceipt: true,
      ...(attachments.length > 0 ? { attachments } : {}),
    };
    const result = await enqueue(candidate, message);
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

  /** The thread a question here is answered in (an existing one on the message, or a new one); undefined: the channel. */
  const threadFor = async (message: Message, text: string): Promise<string | undefined> => {
    if (!threadable(message) || !(await threadsOn(message.channelId))) return undefined;
    return message.thread?.id ?? (await openThread(message, text));
  };

  /**
   * Offers a question to the queue; on "queued" shows the first signs of life (typing, 👀 on `message`).
   * "failed": the queue could not take it (the caller tells the user); undefined: it does not fit the payload.
   */
  const enqueue = async (
    candidate: InboundMessage,
    message: Message,
  ): Promise<EnqueueResult | "failed" | undefined> => {
    const parsed = inboundMessageSchema.safeParse(candidate);
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
    const inThread = candidate.chatId !== message.channelId;
    // The first sign of life as soon as the question is queued, not when a worker picks it up (the
    // worker shows it again if it starts after the indicator faded). Cosmetic: nothing waits for it.
    // Not on a question answered in its own thread: the worker could not reach it to replace the 👀.
    if (options.statusReactions && !inThread) {
      message
        .react(STATUS_EMOJI.queued)
        .catch((error: unknown) => log.debug({ err: error, messageId: message.id }, "discord: status reaction failed"));
    }
    const target = inThread ? message.thread : message.channel;
    if (target && "sendTyping" in target) {
      target
        .sendTyping()
        .catch((error: unknown) =>
          log.debug({ err: error, channelId: candidate.chatId }, "discord: typing indicator failed"),
        );
    }
    return result;
  };

  /** "Ask <bot>" on a message: the question is that message (its text, files and author); the asker gets a private note. */
  const onAsk = async (interaction: MessageContextMenuCommandInteraction, isDm: boolean): Promise<void> => {
    // Discord allows 3 s before the first response, and a thread or Redis may take longer: acknowledge first.
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
    const authorName = cutText(target.member?.displayName ?? target.author.displayName, 200) || target.author.username;
    const member = interaction.member;
    const askerName =
      cutText(member && "displayName" in member ? member.displayName : interaction.user.displayName, 200) ||
      interaction.user.username;
    const channelId = (await threadFor(target, text || authorName)) ?? interaction.channelId;
    const result = await enqueue(
      {
        platform: "discord",
        conversationKey: discordConversationKey(channelId),
        chatId: channelId,
        // The answer replies to the chosen message; asking twice about one message is one question.
        messageId: target.id,
        chatType: isDm ? "private" : "group",
        ...(interaction.guildId ? { guildId: interaction.guildId } : {}),
        author: { id: interaction.user.id, displayName: askerName },
        text: askQuestionText(authorName, text, attachments.length),
        receivedAt: now(),
        typingOnReceipt: true,
        ...(attachments.length > 0 ? { attachments } : {}),
      },
      target,
    );
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
    const channel = interaction.channel as
      | (TextBasedChannel & { isThread(): boolean; parentId?: string | null })
      | null;
    const isDm = channel?.type === ChannelType.DM;
    if (
      !interaction.channelId ||
      !isAllowed(interaction.guildId, isDm ? { id: interaction.channelId, isThread: () => false } : channel)
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
      // Acknowledge first (Discord allows 3 s); the worker's final edit removes the button.
      await interaction.deferUpdate();
      await gateway.stop(discordConversationKey(channelId));
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
    // A summary takes longer than the 3 s Discord allows before the first response: acknowledge first.
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
      // Registered once: by the process holding shard 0, and only when the set differs (a PUT on
      // every start of every process is how bots earn a long 429 lockout).
      if ((options.registerCommands ?? true) && holdsShardZero(client)) {
        try {
          const wanted: ApplicationCommandData[] = [
            ...DISCORD_APPLICATION_COMMANDS,
            ...(settingsUi ? DISCORD_SETTINGS_COMMANDS : []),
            askCommandFor(client.user?.displayName ?? "the bot"),
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
