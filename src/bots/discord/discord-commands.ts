/** The bot's commands on Discord, as text to the bot and as slash commands, plus the texts users see. */
import { ApplicationIntegrationType, InteractionContextType, type ChatInputApplicationCommandData } from "discord.js";
import { SETTINGS_COMMAND_OPTIONS } from "./discord-settings.js";

const COMMAND_DESCRIPTIONS = {
  reset: "Forget this channel's conversation with the bot (its settings stay)",
  compact: "Fold the older part of this conversation into a short summary",
  stop: "Stop the answer the bot is writing in this channel",
  help: "How to talk to the bot",
};

/** A command the bot understands; any other "/word" gets the help text, never silence. */
export type DiscordCommand = keyof typeof COMMAND_DESCRIPTIONS;

/** Whether a name is one of the bot's commands. */
export function isDiscordCommand(name: string): name is DiscordCommand {
  return Object.hasOwn(COMMAND_DESCRIPTIONS, name);
}

/** What a message that starts with "/word" asks for; undefined when it is not a command at all. */
export function parseTextCommand(text: string): DiscordCommand | "unknown" | undefined {
  // "/reset", "/reset please", "/reset@TestBot"; but not "/etc/hosts?" (a question that starts with a path).
  const match = /^\/([A-Za-z][\w-]*)(?:@\S+)?(?=\s|$)/.exec(text.trim());
  if (!match) return undefined;
  const name = match[1]!.toLowerCase();
  return isDiscordCommand(name) ? name : "unknown";
}

/** Application command definitions registered at start (PUT /applications/{id}/commands). */
export const DISCORD_APPLICATION_COMMANDS: ChatInputApplicationCommandData[] = Object.entries(COMMAND_DESCRIPTIONS).map(
  ([name, description]) => inGuildsAndDms({ name, description }),
);

/** The settings commands' definitions, registered when the adapter has the settings port. */
export const DISCORD_SETTINGS_COMMANDS: ChatInputApplicationCommandData[] = Object.entries(SETTINGS_COMMAND_OPTIONS)
  .map(([name, command]) => ({ name, ...command }))
  .map(inGuildsAndDms);

/** A command definition usable in servers and the bot's DMs, for server installs. */
export function inGuildsAndDms<T extends object>(command: T) {
  return {
    ...command,
    contexts: [InteractionContextType.Guild, InteractionContextType.BotDM],
    integrationTypes: [ApplicationIntegrationType.GuildInstall],
  };
}

/** The help text (Discord Markdown). */
export function discordHelpText(botName: string): string {
  return [
    `**${botName}** answers with a local model and can look things up (weather, news, web pages, time).`,
    `• In a server channel: mention me (@${botName} …) or reply to one of my messages. Everyone in a channel shares one conversation; a thread is a conversation of its own.`,
    "• In a DM: just write.",
    `• About any message: its menu → Apps → Ask ${botName}.`,
    "Commands: `/reset` forget this conversation · `/compact` fold older messages into a summary · `/stop` stop the answer being written · `/help` this text.",
    "Settings: `/settings` · `/model` · `/think on|off` · `/reasoning off|collapsed|full` · `/persona <text>` · `/tools` · `/voice off|on|auto` · `/settings threads on|off` a thread per question here (in a server, Manage Server or Manage Channels may change them).",
  ].join("\n");
}

/** The answer to `/reset`. */
export const RESET_DONE_TEXT =
  "🧹 Done: I have forgotten this conversation. Its settings stay (`/settings reset` restores the defaults).";

/** The answer to `/stop`, depending on whether an answer was being written. */
export function stopResultText(stopped: boolean): string {
  return stopped ? "⏹ Stopped." : "Nothing to stop: I am not writing an answer here right now.";
}

/** The polite refusal of an over-long message. */
export function tooLongText(length: number, max: number): string {
  return `Sorry, your message is too long for me (${length} characters; I can read at most ${max}). Please shorten it or split it up.`;
}

/** What the user sees when the queue cannot take the message (Redis down, …). */
export const UNAVAILABLE_TEXT = "Sorry, I can't take new questions right now. Please try again in a minute.";
