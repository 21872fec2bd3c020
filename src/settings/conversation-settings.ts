/**
 * What one conversation may set for itself, and how those choices combine with the
 * deployment's defaults (MODEL, ENABLE_THINKING, SHOW_REASONING, every tool on).
 * Only the choices that differ from the defaults are stored, so changing a default in
 * the environment reaches every conversation that did not choose otherwise.
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

export { isTimeZoneName };

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

/** What an answer runs with: the defaults with the conversation's choices applied. */
export interface ConversationSettings {
  model: string;
  thinking: boolean;
  reasoning: ReasoningDisplay;
  persona?: string;
  timeZone?: string;
  /** Absent: auto (DEFAULT_VOICE_MODE). */
  voice?: VoiceMode;
  toolsOff: string[];
}

/** A change to a conversation's settings: a value sets it, `null` goes back to the default. */
export interface SettingsChange {
  model?: string | null;
  thinking?: boolean | null;
  reasoning?: ReasoningDisplay | null;
  persona?: string | null;
  timeZone?: string | null;
  voice?: VoiceMode | null;
  threads?: boolean | null;
  /** Tool name → on (true) or off (false). */
  tools?: Record<string, boolean>;
}

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
