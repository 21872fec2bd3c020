/**
 * What one conversation may set for itself, over the deployment's defaults. Only choices that differ are
 * stored, so changing a default in the environment reaches every conversation that did not choose otherwise.
 */
import { isTimeZoneName } from "../shared/time-zone.js";
import { z } from "zod";

/** Longest persona a conversation may set (characters as people count them). */
export const MAX_PERSONA_CHARS = 1000;

/** How reasoning is shown in the chat (the values of SHOW_REASONING). */
export const reasoningDisplaySchema = z.enum(["off", "collapsed", "full"]);
export type ReasoningDisplay = z.infer<typeof reasoningDisplaySchema>;

/** When answers are also spoken (/voice): never, always, or (auto, the default) when the question was a voice note. */
export const voiceModeSchema = z.enum(["off", "on", "auto"]);
export type VoiceMode = z.infer<typeof voiceModeSchema>;

/** The voice mode of a conversation that chose none. */
export const DEFAULT_VOICE_MODE: VoiceMode = "auto";

/** One stored field each: a bad one is dropped on its own, the others still apply. */
export const settingsFieldSchemas = {
  model: z.string().trim().min(1).max(200),
  thinking: z.enum(["on", "off"]).transform((v) => v === "on"),
  reasoning: reasoningDisplaySchema,
  persona: z
    .string()
    .trim()
    .min(1)
    .refine((v) => [...v].length <= MAX_PERSONA_CHARS, { message: `at most ${MAX_PERSONA_CHARS} characters` }),
  timeZone: z.string().refine(isTimeZoneName, { message: "expected an IANA time zone" }),
  voice: voiceModeSchema,
  threads: z.enum(["on", "off"]).transform((v) => v === "on"),
} as const;

/** The choices a conversation made; absent = the default. */
export interface SettingsOverrides {
  model?: string;
  thinking?: boolean;
  reasoning?: ReasoningDisplay;
  persona?: string;
  /** The chat's IANA zone (/timezone); absent = the server's. */
  timeZone?: string;
  /** Spoken answers (/voice); absent = auto. */
  voice?: VoiceMode;
  /** Tools switched off here (new tools are on until someone switches them off). */
  toolsOff: string[];
  /** A Discord channel's own choice of a thread per question (/settings threads); absent = DISCORD_AUTO_THREAD. */
  threads?: boolean;
}

/** The deployment's defaults. */
export interface SettingsDefaults {
  model: string;
  thinking: boolean;
  reasoning: ReasoningDisplay;
}

/** What an answer runs with: the defaults with the conversation's choices applied (`threads` is the adapter's). */
export type ConversationSettings = SettingsDefaults & Omit<SettingsOverrides, keyof SettingsDefaults | "threads">;

/** A change: a value sets a setting, `null` goes back to the default; `tools` maps a tool name to on (true) or off. */
export type SettingsChange = { [K in Exclude<keyof SettingsOverrides, "toolsOff">]?: SettingsOverrides[K] | null } & {
  tools?: Record<string, boolean>;
};

/** Combines the defaults with a conversation's choices. */
export function effectiveSettings(defaults: SettingsDefaults, overrides: SettingsOverrides): ConversationSettings {
  return {
    model: overrides.model ?? defaults.model,
    thinking: overrides.thinking ?? defaults.thinking,
    reasoning: overrides.reasoning ?? defaults.reasoning,
    ...(overrides.persona !== undefined ? { persona: overrides.persona } : {}),
    ...(overrides.timeZone !== undefined ? { timeZone: overrides.timeZone } : {}),
    ...(overrides.voice !== undefined ? { voice: overrides.voice } : {}),
    toolsOff: [...overrides.toolsOff],
  };
}
