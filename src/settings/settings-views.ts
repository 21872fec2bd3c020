/**
 * The texts and buttons of the settings commands, platform-free. A button's data replays a command
 * (`cfg:think off`); every view also names the typed command, for clients without buttons.
 */
import { SETTINGS_ACTION_PREFIX, type SettingsAnswer, type SettingsButton } from "../contracts/settings-port.js";
import type { ToolCatalogueGroup } from "../tools/tool-catalogue.js";
import {
  DEFAULT_VOICE_MODE,
  MAX_PERSONA_CHARS,
  reasoningDisplaySchema,
  voiceModeSchema,
  type ConversationSettings,
  type SettingsDefaults,
  type SettingsOverrides,
} from "./conversation-settings.js";

// Telegram refuses large reply markups and Discord shows 25 buttons: 20 tools and a row to turn pages fit both.
const TOOLS_PER_PAGE = 20;

/** Button data is at most 64 bytes (Telegram's callback_data limit; Discord allows 100). */
const MAX_ACTION_BYTES = 64;

/** What a view shows. */
export interface SettingsState {
  defaults: SettingsDefaults;
  overrides: SettingsOverrides;
  settings: ConversationSettings;
  isPrivate: boolean;
  /** Answers can be spoken where this conversation lives (Telegram, Discord; not the terminal or the web page). */
  speaks: boolean;
}

/** The data of a button that runs `command args`; a long argument is replaced by its position in `list`. */
export function actionFor(command: string, args: string, list?: readonly string[], listPrefix = ""): string {
  const direct = `${SETTINGS_ACTION_PREFIX}${command}${args ? ` ${args}` : ""}`;
  if (Buffer.byteLength(direct, "utf8") <= MAX_ACTION_BYTES || !list) return direct;
  return `${SETTINGS_ACTION_PREFIX}${command} ${listPrefix}#${list.indexOf(args.slice(listPrefix.length))}`;
}

const button = (label: string, action: string): SettingsButton => ({ label, action });
const marked = (label: string, current: boolean) => (current ? `• ${label}` : label);
const defaultNote = (isDefault: boolean) => (isDefault ? " (default)" : "");
const onOff = (on: boolean) => (on ? "on" : "off");
/** A view's text: the lead (a reply to what was typed) first, set apart. */
const textOf = (lead: string | undefined, ...rest: string[]) => [...(lead ? [lead, ""] : []), ...rest].join("\n");
const whoMayChange = (isPrivate: boolean) =>
  isPrivate ? [] : ["Anyone can look; only admins of this chat can change these."];

/** Every tool's name, in the order `/tools` lists them. */
export function toolNamesOf(groups: readonly ToolCatalogueGroup[]): string[] {
  return groups.flatMap((g) => g.tools.map((t) => t.name));
}

/** `/settings`: every setting, with buttons to change each. */
export function settingsView(state: SettingsState, tools: readonly ToolCatalogueGroup[]): SettingsAnswer {
  const { settings: s, overrides: o } = state;
  const names = toolNamesOf(tools);
  const persona = s.persona ? `“${s.persona.length > 80 ? `${s.persona.slice(0, 80)}…` : s.persona}”` : "none";
  return {
    text: [
      "⚙️ Settings of this conversation",
      `• Model: ${s.model}${defaultNote(o.model === undefined)}`,
      `• Thinking: ${onOff(s.thinking)}${defaultNote(o.thinking === undefined)}`,
      `• Reasoning shown: ${s.reasoning}${defaultNote(o.reasoning === undefined)}`,
      `• Persona: ${persona}`,
      `• Tools: ${names.filter((n) => !s.toolsOff.includes(n)).length} of ${names.length} on`,
      ...(state.speaks
        ? [`• Spoken answers: ${s.voice ?? DEFAULT_VOICE_MODE}${defaultNote(o.voice === undefined)}`]
        : []),
      // Only a Discord channel's admins set it (/settings threads); shown once chosen.
      ...(o.threads !== undefined ? [`• A thread per question: ${onOff(o.threads)}`] : []),
      "",
      `Change: /model, /think on|off, /reasoning off|collapsed|full, /persona <text>, /tools${state.speaks ? ", /voice off|on|auto" : ""}. /settings reset restores the defaults.`,
      ...whoMayChange(state.isPrivate),
    ].join("\n"),
    buttons: [
      [button(`Thinking: turn ${s.thinking ? "off" : "on"}`, actionFor("think", s.thinking ? "off" : "on"))],
      reasoningDisplaySchema.options.map((mode) =>
        button(marked(`Reasoning ${mode}`, s.reasoning === mode), actionFor("reasoning", mode)),
      ),
      [button("Model…", actionFor("model", "")), button("Tools…", actionFor("tools", ""))],
      [
        ...(s.persona ? [button("Remove persona", actionFor("persona", "reset"))] : []),
        button("Reset to defaults", actionFor("settings", "reset")),
      ],
    ],
  };
}

/** `/model`: the current model and one button per choice. */
export function modelView(state: SettingsState, choices: readonly string[], lead?: string): SettingsAnswer {
  const current = state.settings.model;
  return {
    text: textOf(
      lead,
      `Model here: ${current}${defaultNote(state.overrides.model === undefined)}.`,
      `Choose with the buttons or /model <name>: ${choices.join(", ")}`,
      ...whoMayChange(state.isPrivate),
    ),
    buttons: choices.map((name) => [button(marked(name, name === current), actionFor("model", name, choices))]),
  };
}

/** `/think`: the switch and its two buttons. */
export function thinkView(state: SettingsState, lead?: string): SettingsAnswer {
  const on = state.settings.thinking;
  return {
    text: textOf(
      lead,
      `Thinking here: ${onOff(on)}${defaultNote(state.overrides.thinking === undefined)}. Switch with /think on or /think off.`,
    ),
    buttons: [
      [button(marked("On", on), actionFor("think", "on")), button(marked("Off", !on), actionFor("think", "off"))],
    ],
  };
}

/** `/reasoning`: the display mode and its three buttons. */
export function reasoningView(state: SettingsState, lead?: string): SettingsAnswer {
  const mode = state.settings.reasoning;
  return {
    text: textOf(
      lead,
      `Reasoning shown here: ${mode}${defaultNote(state.overrides.reasoning === undefined)}.`,
      "off hides it, collapsed shows a line while the model thinks, full shows all of it. Change with /reasoning off|collapsed|full.",
    ),
    buttons: [reasoningDisplaySchema.options.map((m) => button(marked(m, m === mode), actionFor("reasoning", m)))],
  };
}

/** Whether this chat can get spoken answers, and if not why. */
export type VoiceAvailability = "ready" | "not-set-up" | "not-here";

const VOICE_UNAVAILABLE = {
  "not-set-up": "Speech is not set up on this bot (TTS_BASE_URL), so answers stay text for now.",
  "not-here": "Answers are spoken on Telegram and Discord; here they stay text.",
} as const;

/** What each voice mode does, in the words of `/voice`. */
const VOICE_MODE_MEANING = {
  off: "answers stay text",
  on: "every answer is also spoken",
  auto: "a voice note is answered with voice too",
} as const;

/** `/voice`: the mode and its three buttons; where answers cannot be spoken (`speech`) the view says why. */
export function voiceView(state: SettingsState, speech: VoiceAvailability, lead?: string): SettingsAnswer {
  const mode = state.settings.voice ?? DEFAULT_VOICE_MODE;
  return {
    text: textOf(
      lead,
      `Spoken answers here: ${mode}${defaultNote(state.overrides.voice === undefined)}: ${VOICE_MODE_MEANING[mode]}.`,
      "Change with /voice off|on|auto (auto: a voice note is answered with voice).",
      ...(speech === "ready" ? [] : [VOICE_UNAVAILABLE[speech]]),
      ...whoMayChange(state.isPrivate),
    ),
    buttons: [voiceModeSchema.options.map((m) => button(marked(m, m === mode), actionFor("voice", m)))],
  };
}

/** `/persona`: the persona, and how to set or remove it. */
export function personaView(state: SettingsState, lead?: string): SettingsAnswer {
  const persona = state.settings.persona;
  return {
    text: textOf(
      lead,
      persona ? `Persona here: “${persona}”` : "No persona here.",
      `Set one with /persona <text> (at most ${MAX_PERSONA_CHARS} characters); /persona reset removes it.`,
    ),
    buttons: persona ? [[button("Remove persona", actionFor("persona", "reset"))]] : [],
  };
}

/** `/tools`: every tool by source, each with a toggle. */
export function toolsView(
  state: SettingsState,
  groups: readonly ToolCatalogueGroup[],
  lead?: string,
  page = 0,
): SettingsAnswer {
  const off = new Set(state.settings.toolsOff);
  const names = toolNamesOf(groups);
  const pages = Math.max(1, Math.ceil(names.length / TOOLS_PER_PAGE));
  const at = Math.min(Math.max(0, Math.floor(page)), pages - 1);
  const first = at * TOOLS_PER_PAGE;
  const shown = new Set(names.slice(first, first + TOOLS_PER_PAGE));
  const lines = groups.flatMap((g) => {
    const tools = g.tools.filter((t) => shown.has(t.name));
    // A group with no tools (an MCP server that is away) is named, as unavailable, on the first page only.
    if (tools.length === 0 && (g.tools.length > 0 || at > 0)) return [];
    return [
      `${g.source}:${g.state !== undefined && g.state !== "ready" ? " (unavailable right now)" : ""}`,
      ...tools.map((t) => `${off.has(t.name) ? "⛔" : "✅"} ${t.name}: ${firstSentence(t.description)}`),
    ];
  });
  const nav = [
    ...(at > 0 ? [button(`◀ Page ${at}`, actionFor("tools", `page ${at}`))] : []),
    ...(at < pages - 1 ? [button(`Page ${at + 2} ▶`, actionFor("tools", `page ${at + 2}`))] : []),
  ];
  return {
    text: textOf(
      lead,
      `Tools here (✅ on, ⛔ off)${pages > 1 ? `, page ${at + 1} of ${pages}` : ""}:`,
      ...lines,
      `Toggle with the buttons or /tools off <name>, /tools on <name>${pages > 1 ? "; /tools page <n> turns pages" : ""}.`,
      ...whoMayChange(state.isPrivate),
    ),
    buttons: [
      ...[...shown].map((name) => {
        const isOff = off.has(name);
        const args = `${isOff ? "on" : "off"} ${name}`;
        return [button(`${isOff ? "⛔" : "✅"} ${name}`, actionFor("tools", args, names, isOff ? "on " : "off "))];
      }),
      ...(nav.length ? [nav] : []),
    ],
  };
}

/** The page (from 0) of `/tools` that shows `name`. */
export function toolsPageOf(groups: readonly ToolCatalogueGroup[], name: string): number {
  const index = toolNamesOf(groups).indexOf(name);
  return index < 0 ? 0 : Math.floor(index / TOOLS_PER_PAGE);
}

/** The short refusal for someone who may not change settings here. */
export function refusal(): SettingsAnswer {
  return {
    text: "🔒 Only admins of this chat can change its settings. Anyone can look with /settings.",
    buttons: [],
    refused: true,
    notice: "Only admins can change settings here.",
  };
}

/** A short line about a description (tool descriptions are written for the model and can be long). */
function firstSentence(text: string): string {
  const first = text.split(/(?<=[.!?])\s/)[0] ?? text;
  return first.length > 90 ? `${first.slice(0, 89)}…` : first;
}
