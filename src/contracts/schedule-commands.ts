/**
 * `/remind` and `/schedules` behind the settings port: the settings service routes them here (with the
 * asker and the chat's zone), the schedules layer implements them. Answers are settings answers, so every
 * adapter draws them, buttons included, the way it draws the other commands.
 */
import type { SettingsAnswer, SettingsAsker } from "./settings-port.js";

/** The schedule commands. */
export interface ScheduleCommands {
  /** `/remind <when> <text>`. */
  remind(asker: SettingsAsker, args: string, timeZone: string): Promise<SettingsAnswer>;
  /** `/schedules` (a list with cancel buttons) and `/schedules cancel <id>`. */
  schedules(asker: SettingsAsker, args: string, timeZone: string): Promise<SettingsAnswer>;
}
