/** `/remind` and `/schedules`, routed here by the settings service; answers are settings answers. */
import type { SettingsAnswer, SettingsAsker } from "./settings-port.js";

/** The schedule commands. */
export interface ScheduleCommands {
  /** `/remind <when> <text>`. */
  remind(asker: SettingsAsker, args: string, timeZone: string): Promise<SettingsAnswer>;
  /** `/schedules` (a list with cancel buttons) and `/schedules cancel <id>`. */
  schedules(asker: SettingsAsker, args: string, timeZone: string): Promise<SettingsAnswer>;
}
