/** Settings commands, button presses and completions; the logic lives behind this port, adapters only draw answers. */
import type { Platform } from "./inbound-message.js";

/** The settings commands, as typed after the slash. */
export const SETTINGS_COMMANDS = [
  "settings",
  "model",
  "think",
  "reasoning",
  "persona",
  "tools",
  "timezone",
  "voice",
  "remind",
  "schedules",
] as const;
export type SettingsCommand = (typeof SETTINGS_COMMANDS)[number];

/** True for the name of a settings command. */
export function isSettingsCommand(name: string): name is SettingsCommand {
  return (SETTINGS_COMMANDS as readonly string[]).includes(name);
}

/** Button data starts with this (Telegram callback_data, Discord custom_id), so adapters can route a press. */
export const SETTINGS_ACTION_PREFIX = "cfg:";

/** Who asks, and where. */
export interface SettingsAsker {
  platform: Platform;
  conversationKey: string;
  /** Private chats (Telegram private, Discord DM, terminal): the user decides alone. */
  isPrivate: boolean;
  /** The user's platform id (matched against ADMIN_USER_IDS as `tg:<id>` / `dc:<id>`). */
  userId: string;
  /** Whether the user administers this chat; asked only when something is to change. */
  isChatAdmin(): Promise<boolean>;
}

/** A button under an answer: its label and the data its press sends back (at most 64 bytes). */
export interface SettingsButton {
  label: string;
  action: string;
}

/** The answer to a command or a press. */
export interface SettingsAnswer {
  /** Plain text (no Markdown), short. */
  text: string;
  /** Rows of buttons (may be empty). */
  buttons: SettingsButton[][];
  /** The user may not change settings here: nothing changed, and a short refusal is the whole answer. */
  refused?: boolean;
  /** A short notice of what the press did (a Telegram toast). */
  notice?: string;
}

/** The settings service adapters call. */
export interface SettingsPort {
  /** Runs a command with its arguments (the text after the command). */
  run(asker: SettingsAsker, command: SettingsCommand, args: string): Promise<SettingsAnswer>;
  /** Runs the action of a pressed button; undefined when the data is not a settings action. */
  press(asker: SettingsAsker, action: string): Promise<SettingsAnswer | undefined>;
  /** Completions for an argument being typed (Discord autocomplete): model names, tool names. */
  complete(command: SettingsCommand, typed: string): Promise<string[]>;
  /** A Discord channel's own choice of a thread per question (`/settings threads`); undefined: the default. */
  threads?(conversationKey: string): Promise<boolean | undefined>;
}
