/**
 * The settings commands in Discord: slash commands with options, the same as text to the bot, and buttons
 * that change a setting in place. Who may change: in a DM the user; in a server, members with Manage Server
 * or Manage Channels there (the ADMIN_USER_IDS rule is the SettingsPort's).
 */
import {
  ApplicationCommandOptionType,
  ChannelType,
  MessageFlags,
  PermissionFlagsBits,
  type ApplicationCommandOptionData,
  type AutocompleteInteraction,
  type ButtonInteraction,
  type ChatInputCommandInteraction,
  type Message,
  type PermissionsBitField,
} from "discord.js";
import {
  isSettingsCommand,
  SETTINGS_ACTION_PREFIX,
  type SettingsAnswer,
  type SettingsAsker,
  type SettingsCommand,
  type SettingsPort,
} from "../../contracts/settings-port.js";

/** Discord allows 5 rows of 5 buttons per message. */
const MAX_ROWS = 5;
const MAX_PER_ROW = 5;

/** An optional string option; `choices` become its fixed values. */
function option(
  name: string,
  description: string,
  extra: { choices?: string[]; autocomplete?: true; max_length?: number; required?: true } = {},
): ApplicationCommandOptionData {
  const { choices, required = false, ...rest } = extra;
  return {
    type: ApplicationCommandOptionType.String,
    name,
    description,
    required,
    ...(choices ? { choices: choices.map((c) => ({ name: c, value: c })) } : {}),
    ...rest,
  } as ApplicationCommandOptionData;
}

const ON_OFF = ["on", "off"];

/** Options of each settings application command (registered with the others). */
export const SETTINGS_COMMAND_OPTIONS: Record<
  SettingsCommand,
  { description: string; options: ApplicationCommandOptionData[] }
> = {
  settings: {
    description: "This channel's settings, with buttons to change them",
    options: [
      option("action", "reset: back to the defaults", { choices: ["reset"] }),
      option("threads", "A thread per question in this channel (server admins)", { choices: ON_OFF }),
    ],
  },
  model: {
    description: "Show the models, or switch this channel's model",
    options: [option("name", "The model to switch to", { autocomplete: true })],
  },
  think: {
    description: "Thinking on or off in this channel",
    options: [option("state", "on or off", { choices: ON_OFF })],
  },
  reasoning: {
    description: "How the model's reasoning is shown here",
    options: [option("mode", "off, collapsed or full", { choices: ["off", "collapsed", "full"] })],
  },
  persona: {
    description: "A persona for this channel (or reset)",
    options: [option("text", "The persona, or reset", { max_length: 1000 })],
  },
  tools: {
    description: "The tools this channel may use, with toggles",
    options: [
      option("state", "on or off", { choices: ON_OFF }),
      option("tool", "The tool to switch", { autocomplete: true }),
    ],
  },
  timezone: {
    description: "Show or set this channel's time zone (for reminders and schedules)",
    options: [option("zone", "An IANA zone such as Asia/Shanghai, or reset", { max_length: 64 })],
  },
  voice: {
    description: "Spoken answers here: off, on (every answer), auto (voice answers voice)",
    options: [option("mode", "off, on or auto", { choices: ["off", "on", "auto"] })],
  },
  remind: {
    description: "Post a reminder later or repeatedly: /remind in 20 minutes stretch",
    options: [
      option("text", "When, then what: in 20 minutes stretch · every weekday at 08:00 ask: today's AI news", {
        required: true,
        max_length: 1100,
      }),
    ],
  },
  schedules: {
    description: "This channel's schedules, with buttons to cancel them",
    options: [],
  },
};

/** The arguments a slash command's options stand for (as if typed after the command). */
const ARGS_OF: Record<SettingsCommand, (get: (option: string) => string) => string> = {
  settings: (get) => (get("threads") ? `threads ${get("threads")}` : get("action")),
  model: (get) => get("name"),
  think: (get) => get("state"),
  reasoning: (get) => get("mode"),
  persona: (get) => get("text"),
  tools: (get) => [get("state"), get("tool")].filter(Boolean).join(" "),
  timezone: (get) => get("zone"),
  voice: (get) => get("mode"),
  remind: (get) => get("text"),
  schedules: () => "",
};

/** The message components of an answer: its buttons packed into Discord's 5×5 grid. */
function settingsComponents(
  answer: SettingsAnswer,
): { type: 1; components: { type: 2; style: 2; label: string; custom_id: string }[] }[] {
  const buttons = answer.buttons.flat().slice(0, MAX_ROWS * MAX_PER_ROW);
  const rows = [];
  for (let i = 0; i < buttons.length; i += MAX_PER_ROW) {
    rows.push({
      type: 1 as const,
      components: buttons
        .slice(i, i + MAX_PER_ROW)
        .map((b) => ({ type: 2 as const, style: 2 as const, label: b.label.slice(0, 80), custom_id: b.action })),
    });
  }
  return rows;
}

/** Discord refuses messages over 2000 characters; a long tool list is cut rather than lost. */
function fitted(text: string): string {
  const chars = [...text];
  return chars.length <= 2000 ? text : `${chars.slice(0, 1999).join("")}…`;
}

/** A settings command typed in a message to the bot ("/model qwen3-4b"); undefined for anything else. */
function parseSettingsText(text: string): { command: SettingsCommand; args: string } | undefined {
  const match = /^\/([A-Za-z]+)(?:@\S+)?(?:\s+([\s\S]*))?$/.exec(text.trim());
  const name = match?.[1]?.toLowerCase();
  if (!name || !isSettingsCommand(name)) return undefined;
  return { command: name, args: (match?.[2] ?? "").trim() };
}

/** The Discord side of the settings commands. */
export interface DiscordSettingsUi {
  /** Answers a settings command typed to the bot; false when the text is not one. */
  message(
    message: Message,
    text: string,
    conversationKey: string,
    reply: (content: string, components: unknown[]) => Promise<void>,
  ): Promise<boolean>;
  /** Answers a settings slash command. */
  command(interaction: ChatInputCommandInteraction, conversationKey: string): Promise<boolean>;
  /** Changes a setting from a button; false when the button is not a settings one. */
  button(interaction: ButtonInteraction, conversationKey: string): Promise<boolean>;
  /** Suggests model or tool names while they are typed. */
  autocomplete(interaction: AutocompleteInteraction): Promise<void>;
}

/** Creates the UI over the settings port. */
export function createDiscordSettingsUi(settings: SettingsPort): DiscordSettingsUi {
  const asker = (
    conversationKey: string,
    isDm: boolean,
    userId: string,
    permissions: () => Readonly<PermissionsBitField> | null | undefined,
  ): SettingsAsker => ({
    platform: "discord",
    conversationKey,
    isPrivate: isDm,
    userId,
    isChatAdmin: async () =>
      permissions()?.any([PermissionFlagsBits.ManageGuild, PermissionFlagsBits.ManageChannels]) ?? false,
  });
  const interactionAsker = (interaction: ButtonInteraction | ChatInputCommandInteraction, conversationKey: string) =>
    asker(conversationKey, !interaction.inGuild(), interaction.user.id, () => interaction.memberPermissions);
  return {
    async message(message, text, conversationKey, reply) {
      const parsed = parseSettingsText(text);
      if (!parsed) return false;
      const isDm = message.channel.type === ChannelType.DM;
      const who = asker(conversationKey, isDm, message.author.id, () =>
        message.inGuild() && message.member ? message.member.permissionsIn(message.channel) : undefined,
      );
      const answer = await settings.run(who, parsed.command, parsed.args);
      await reply(fitted(answer.text), settingsComponents(answer));
      return true;
    },
    async command(interaction, conversationKey) {
      const name = interaction.commandName;
      if (!isSettingsCommand(name)) return false;
      const get = (option: string) => interaction.options.getString(option) ?? "";
      const answer = await settings.run(interactionAsker(interaction, conversationKey), name, ARGS_OF[name](get));
      // Views are public (anyone may look, and their buttons work for admins); refusals only for the asker.
      await interaction.reply({
        content: fitted(answer.text),
        components: settingsComponents(answer),
        allowedMentions: { parse: [] },
        ...(answer.refused ? { flags: MessageFlags.Ephemeral } : {}),
      });
      return true;
    },
    async button(interaction, conversationKey) {
      if (!interaction.customId.startsWith(SETTINGS_ACTION_PREFIX)) return false;
      const answer = await settings.press(interactionAsker(interaction, conversationKey), interaction.customId);
      if (!answer) return false;
      if (answer.refused) await interaction.reply({ content: answer.text, flags: MessageFlags.Ephemeral });
      else
        await interaction.update({
          content: fitted(answer.text),
          components: settingsComponents(answer),
          allowedMentions: { parse: [] },
        });
      return true;
    },
    async autocomplete(interaction) {
      const focused = interaction.options.getFocused(true);
      const command = interaction.commandName;
      const names = isSettingsCommand(command) ? await settings.complete(command, String(focused.value)) : [];
      await interaction.respond(names.map((n) => ({ name: n.slice(0, 100), value: n.slice(0, 100) })));
    },
  };
}
