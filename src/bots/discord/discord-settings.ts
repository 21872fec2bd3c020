/**
 * The settings commands in Discord: application commands with options (`/model name:`
 * autocompletes the choices, `/think state:` offers on/off), the same commands as text to
 * the bot, and buttons under the answer that change a setting in place. Who may change:
 * in a DM the user; in a server, members with Manage Server or Manage Channels in that
 * channel (the ADMIN_USER_IDS rule is the SettingsPort's). What the commands do is the port's.
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

/** Options of each settings application command (registered with the others). */
export const SETTINGS_COMMAND_OPTIONS: Record<
  SettingsCommand,
  { description: string; options: ApplicationCommandOptionData[] }
> = {
  settings: {
    description: "This channel's settings, with buttons to change them",
    options: [
      {
        type: ApplicationCommandOptionType.String,
        name: "action",
        description: "reset: back to the defaults",
        required: false,
        choices: [{ name: "reset", value: "reset" }],
      },
      {
        type: ApplicationCommandOptionType.String,
        name: "threads",
        description: "A thread per question in this channel (server admins)",
        required: false,
        choices: [
          { name: "on", value: "on" },
          { name: "off", value: "off" },
        ],
      },
    ],
  },
  model: {
    description: "Show the models, or switch this channel's model",
    options: [
      {
        type: ApplicationCommandOptionType.String,
        name: "name",
        description: "The model to switch to",
        required: false,
        autocomplete: true,
      },
    ],
  },
  think: {
    description: "Thinking on or off in this channel",
    options: [
      {
        type: ApplicationCommandOptionType.String,
        name: "state",
        description: "on or off",
        required: false,
        choices: [
          { name: "on", value: "on" },
          { name: "off", value: "off" },
        ],
      },
    ],
  },
  reasoning: {
    description: "How the model's reasoning is shown here",
    options: [
      {
        type: ApplicationCommandOptionType.String,
        name: "mode",
        description: "off, collapsed or full",
        required: false,
        choices: ["off", "collapsed", "full"].map((m) => ({ name: m, value: m })),
      },
    ],
  },
  persona: {
    description: "A persona for this channel (or reset)",
    options: [
      {
        type: ApplicationCommandOptionType.String,
        name: "text",
        description: "The persona, or reset",
        required: false,
        max_length: 1000,
      },
    ],
  },
  tools: {
    description: "The tools this channel may use, with toggles",
    options: [
      {
        type: ApplicationCommandOptionType.String,
        name: "state",
        description: "on or off",
        required: false,
        choices: [
          { name: "on", value: "on" },
          { name: "off", value: "off" },
        ],
      },
      {
        type: ApplicationCommandOptionType.String,
        name: "tool",
        description: "The tool to switch",
        required: false,
        autocomplete: true,
      },
    ],
  },
  timezone: {
    description: "Show or set this channel's time zone (for reminders and schedules)",
    options: [
      {
        type: ApplicationCommandOptionType.String,
        name: "zone",
        description: "An IANA zone such as Asia/Shanghai, or reset",
        required: false,
        max_length: 64,
      },
    ],
  },
  voice: {
    description: "Spoken answers here: off, on (every answer), auto (voice answers voice)",
    options: [
      {
        type: ApplicationCommandOptionType.String,
        name: "mode",
        description: "off, on or auto",
        required: false,
        choices: ["off", "on", "auto"].map((m) => ({ name: m, value: m })),
      },
    ],
  },
  remind: {
    description: "Post a reminder later or repeatedly: /remind in 20 minutes stretch",
    options: [
      {
        type: ApplicationCommandOptionType.String,
        name: "text",
        description: "When, then what: in 20 minutes stretch · every weekday at 08:00 ask: today's AI news",
        required: true,
        max_length: 1100,
      },
    ],
  },
  schedules: {
    description: "This channel's schedules, with buttons to cancel them",
    options: [],
  },
};

/** The arguments a slash command's options stand for (as if typed after the command). */
function argsOf(interaction: ChatInputCommandInteraction, command: SettingsCommand): string {
  const get = (name: string) => interaction.options.getString(name) ?? "";
  switch (command) {
    case "settings":
      return get("threads") ? `threads ${get("threads")}` : get("action");
    case "model":
      return get("name");
    case "think":
    case "reasoning":
      return get(command === "think" ? "state" : "mode");
    case "persona":
      return get("text");
    case "tools":
      return [get("state"), get("tool")].filter(Boolean).join(" ");
    case "timezone":
      return get("zone");
    case "voice":
      return get("mode");
    case "remind":
      return get("text");
    case "schedules":
      return "";
  }
}

/** The message components of an answer: its buttons packed into Discord's 5×5 grid. */
export function settingsComponents(
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

const isAdminBy = (permissions: Readonly<PermissionsBitField> | null | undefined): boolean =>
  permissions?.any([PermissionFlagsBits.ManageGuild, PermissionFlagsBits.ManageChannels]) ?? false;

/** A settings command typed in a message to the bot ("/model qwen3-4b"); undefined for anything else. */
export function parseSettingsText(text: string): { command: SettingsCommand; args: string } | undefined {
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
    isChatAdmin: async () => isAdminBy(permissions()),
  });
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
      const who = asker(
        conversationKey,
        !interaction.inGuild(),
        interaction.user.id,
        () => interaction.memberPermissions,
      );
      const answer = await settings.run(who, name, argsOf(interaction, name));
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
      const who = asker(
        conversationKey,
        !interaction.inGuild(),
        interaction.user.id,
        () => interaction.memberPermissions,
      );
      const answer = await settings.press(who, interaction.customId);
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
