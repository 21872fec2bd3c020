/**
 * The settings commands, platform-free: parses the arguments, checks the asker may change anything, applies
 * the change and renders the answer. Every adapter calls this through the SettingsPort; drawing it is theirs.
 */
import {
  isSettingsCommand,
  SETTINGS_ACTION_PREFIX,
  type SettingsAnswer,
  type SettingsAsker,
  type SettingsPort,
} from "../contracts/settings-port.js";
import type { ScheduleCommands } from "../contracts/schedule-commands.js";
import type { ToolCatalogue } from "../tools/tool-catalogue.js";
import { isTimeZoneName } from "../shared/time-zone.js";
import {
  DEFAULT_VOICE_MODE,
  effectiveSettings,
  MAX_PERSONA_CHARS,
  reasoningDisplaySchema,
  voiceModeSchema,
  type SettingsChange,
} from "./conversation-settings.js";
import type { ModelChoices } from "./model-choices.js";
import { mayChangeSettings } from "./settings-access.js";
import type { SettingsStore } from "./settings-store.js";
import {
  modelView,
  personaView,
  reasoningView,
  refusal,
  settingsView,
  thinkView,
  toolNamesOf,
  toolsPageOf,
  toolsView,
  voiceView,
  type SettingsState,
} from "./settings-views.js";

/** What the service works with; built once per bots role. */
export interface SettingsServiceDeps {
  store: SettingsStore;
  models: ModelChoices;
  toolCatalogue: ToolCatalogue;
  /** ADMIN_USER_IDS, lower-case `tg:<id>` / `dc:<id>`. */
  botAdmins: readonly string[];
  /** `/remind` and `/schedules`; without them those commands say schedules are off here. */
  schedules?: ScheduleCommands;
  /** The zone of chats that chose none (default: the server's). */
  serverTimeZone?: string;
  /** Spoken answers can be made (TTS_BASE_URL is set); `/voice` says so when not. */
  speech?: boolean;
}

/** Platforms whose chats get spoken answers (the terminal and the web chat stay text). */
const SPEAKING_PLATFORMS: ReadonlySet<string> = new Set(["telegram", "discord"]);

// A Map, not an object: a typed word such as "constructor" or "__proto__" must not find Object.prototype.
const SWITCH_WORDS = new Map(
  Object.entries({ on: true, off: false, true: true, false: false, yes: true, no: false, 1: true, 0: false }),
);
const APPLIES_NEXT = "It applies from the next answer.";
const plain = (text: string): SettingsAnswer => ({ text, buttons: [] });

/** "#3" (a long name replaced by its position in a button's data) → the name; anything else as typed. */
function resolveListed(arg: string, list: readonly string[]): string {
  const index = /^#(\d{1,4})$/.exec(arg);
  return index ? (list[Number(index[1])] ?? arg) : arg;
}

/** Creates the service adapters call. */
export function createSettingsService(deps: SettingsServiceDeps): SettingsPort {
  const { store } = deps;
  const stateOf = async (asker: SettingsAsker): Promise<SettingsState> => {
    const overrides = await store.overrides(asker.conversationKey);
    return {
      defaults: store.defaults,
      overrides,
      settings: effectiveSettings(store.defaults, overrides),
      isPrivate: asker.isPrivate,
      speaks: SPEAKING_PLATFORMS.has(asker.platform),
    };
  };
  const toolNames = () => toolNamesOf(deps.toolCatalogue());
  const mayChange = (asker: SettingsAsker) => mayChangeSettings(asker, deps.botAdmins);
  /** Applies a change (the caller checked the asker may make it); the answer is rendered from the state after it. */
  const changeThen = async (
    asker: SettingsAsker,
    change: SettingsChange,
    render: (state: SettingsState) => SettingsAnswer,
    notice: string,
  ): Promise<SettingsAnswer> => {
    await store.change(asker.conversationKey, change);
    return { ...render(await stateOf(asker)), notice };
  };
  /** A value equal to the default is stored as "no choice", so the conversation follows the default later. */
  const orDefault = <T>(value: T, fallback: T): T | null => (value === fallback ? null : value);

  const model = async (asker: SettingsAsker, arg: string): Promise<SettingsAnswer> => {
    const choices = await deps.models.list();
    if (arg === "") return modelView(await stateOf(asker), choices);
    if (!(await mayChange(asker))) return refusal();
    const wanted = resolveListed(arg, choices);
    const name = choices.find((c) => c === wanted) ?? choices.find((c) => c.toLowerCase() === wanted.toLowerCase());
    if (!name)
      return {
        ...modelView(await stateOf(asker), choices, `Unknown model “${wanted}”. Choose one of: ${choices.join(", ")}.`),
        notice: "Unknown model.",
      };
    return changeThen(
      asker,
      { model: orDefault(name, store.defaults.model) },
      (s) => modelView(s, choices, `✅ Model here is now ${name}. ${APPLIES_NEXT}`),
      `Model: ${name}`,
    );
  };

  const think = async (asker: SettingsAsker, arg: string): Promise<SettingsAnswer> => {
    if (arg === "") return thinkView(await stateOf(asker));
    const on = SWITCH_WORDS.get(arg.toLowerCase());
    if (on === undefined) return thinkView(await stateOf(asker), `“${arg}” is neither on nor off.`);
    if (!(await mayChange(asker))) return refusal();
    return changeThen(
      asker,
      { thinking: orDefault(on, store.defaults.thinking) },
      (s) => thinkView(s, `✅ Thinking is now ${on ? "on" : "off"} here. ${APPLIES_NEXT}`),
      `Thinking: ${on ? "on" : "off"}`,
    );
  };

  const reasoning = async (asker: SettingsAsker, arg: string): Promise<SettingsAnswer> => {
    if (arg === "") return reasoningView(await stateOf(asker));
    const mode = reasoningDisplaySchema.options.find((m) => m === arg.toLowerCase());
    if (!mode) return reasoningView(await stateOf(asker), `“${arg}” is not one of off, collapsed, full.`);
    if (!(await mayChange(asker))) return refusal();
    return changeThen(
      asker,
      { reasoning: orDefault(mode, store.defaults.reasoning) },
      (s) => reasoningView(s, `✅ Reasoning is now shown ${mode} here. ${APPLIES_NEXT}`),
      `Reasoning: ${mode}`,
    );
  };

  const persona = async (asker: SettingsAsker, arg: string): Promise<SettingsAnswer> => {
    if (arg === "") return personaView(await stateOf(asker));
    if (!(await mayChange(asker))) return refusal();
    if (arg.toLowerCase() === "reset")
      return changeThen(asker, { persona: null }, (s) => personaView(s, "✅ Persona removed."), "Persona removed");
    const length = [...arg].length;
    if (length > MAX_PERSONA_CHARS)
      return {
        ...personaView(
          await stateOf(asker),
          `That persona has ${length} characters; at most ${MAX_PERSONA_CHARS} fit. Nothing changed.`,
        ),
        notice: "Persona too long.",
      };
    return changeThen(asker, { persona: arg }, (s) => personaView(s, `✅ Persona set. ${APPLIES_NEXT}`), "Persona set");
  };

  const tools = async (asker: SettingsAsker, arg: string): Promise<SettingsAnswer> => {
    const groups = deps.toolCatalogue();
    if (arg === "") return toolsView(await stateOf(asker), groups);
    const [word = "", ...rest] = arg.split(/\s+/);
    // Looking at another page changes nothing: anyone may.
    if (word.toLowerCase() === "page" && rest.length === 1 && /^\d{1,6}$/.test(rest[0]!))
      return toolsView(await stateOf(asker), groups, undefined, Number(rest[0]) - 1);
    const on = SWITCH_WORDS.get(word.toLowerCase());
    const names = toolNames();
    if (on === undefined || rest.length !== 1)
      return toolsView(await stateOf(asker), groups, "Use /tools on <name> or /tools off <name>.");
    if (!(await mayChange(asker))) return refusal();
    const name = resolveListed(rest[0]!, names);
    if (!names.includes(name))
      return {
        ...toolsView(
          await stateOf(asker),
          groups,
          `No tool named “${name}” here. Tools: ${names.slice(0, 20).join(", ")}${names.length > 20 ? ` and ${names.length - 20} more` : ""}.`,
        ),
        notice: "Unknown tool.",
      };
    const verb = on ? "on" : "off";
    return changeThen(
      asker,
      { tools: { [name]: on } },
      (s) => toolsView(s, groups, `✅ ${name} is now ${verb} here. ${APPLIES_NEXT}`, toolsPageOf(groups, name)),
      `${name}: ${verb}`,
    );
  };

  /** `/settings threads on|off`: a thread per question in this Discord channel, whatever DISCORD_AUTO_THREAD says. */
  const threads = async (asker: SettingsAsker, arg: string): Promise<SettingsAnswer> => {
    if (asker.platform !== "discord" || asker.isPrivate)
      return plain("Threads per question are a setting of Discord server channels.");
    const current = (await store.overrides(asker.conversationKey)).threads;
    const usage = "/settings threads on|off switches it; /settings reset goes back to the server's default.";
    if (arg === "") {
      const now = current === undefined ? "the server's default" : current ? "on" : "off";
      return plain(`A thread per question here: ${now}. ${usage}`);
    }
    const on = SWITCH_WORDS.get(arg.toLowerCase());
    if (on === undefined) return plain(`“${arg}” is neither on nor off. ${usage}`);
    if (!(await mayChange(asker))) return refusal();
    return changeThen(
      asker,
      { threads: on },
      () =>
        plain(
          on
            ? "✅ From now on a question here gets a thread of its own, where the answer goes."
            : "✅ From now on answers here stay in the channel (no thread per question).",
        ),
      `Threads: ${on ? "on" : "off"}`,
    );
  };

  const settings = async (asker: SettingsAsker, arg: string): Promise<SettingsAnswer> => {
    if (arg === "") return settingsView(await stateOf(asker), deps.toolCatalogue());
    const [word = "", ...rest] = arg.split(/\s+/);
    if (word.toLowerCase() === "threads") return threads(asker, rest.join(" "));
    if (arg.toLowerCase() !== "reset") {
      const view = settingsView(await stateOf(asker), deps.toolCatalogue());
      const threadsToo = asker.platform === "discord" && !asker.isPrivate ? ", /settings threads on|off" : "";
      return {
        ...view,
        text: `“${arg}” is not an option: use /settings${threadsToo} or /settings reset.\n\n${view.text}`,
      };
    }
    if (!(await mayChange(asker))) return refusal();
    await store.reset(asker.conversationKey);
    const view = settingsView(await stateOf(asker), deps.toolCatalogue());
    return {
      ...view,
      text: `✅ Every setting is back to its default.\n\n${view.text}`,
      notice: "Back to the defaults",
    };
  };

  const voice = async (asker: SettingsAsker, arg: string): Promise<SettingsAnswer> => {
    const speech = !SPEAKING_PLATFORMS.has(asker.platform) ? "not-here" : deps.speech ? "ready" : "not-set-up";
    if (arg === "") return voiceView(await stateOf(asker), speech);
    const mode = voiceModeSchema.options.find((m) => m === arg.toLowerCase());
    if (!mode) return voiceView(await stateOf(asker), speech, `“${arg}” is not one of off, on, auto.`);
    if (!(await mayChange(asker))) return refusal();
    return changeThen(
      asker,
      { voice: orDefault(mode, DEFAULT_VOICE_MODE) },
      (s) => voiceView(s, speech, `✅ Spoken answers are now ${mode} here. ${APPLIES_NEXT}`),
      `Voice: ${mode}`,
    );
  };

  const serverZone = deps.serverTimeZone ?? Intl.DateTimeFormat().resolvedOptions().timeZone;
  const zoneOf = async (asker: SettingsAsker) => (await store.overrides(asker.conversationKey)).timeZone ?? serverZone;

  const timezone = async (asker: SettingsAsker, arg: string): Promise<SettingsAnswer> => {
    const current = await zoneOf(asker);
    const usage = "Set it with /timezone <IANA zone>, e.g. /timezone Asia/Shanghai; /timezone reset uses the server's.";
    if (arg === "") return plain(`Time zone here: ${current}. ${usage}`);
    if (!(await mayChange(asker))) return refusal();
    if (arg.toLowerCase() === "reset")
      return changeThen(
        asker,
        { timeZone: null },
        () => plain(`✅ Time zone here is now the server's, ${serverZone}.`),
        `Time zone: ${serverZone}`,
      );
    if (!isTimeZoneName(arg))
      return {
        text: `“${arg}” is not a time zone I know. Use an IANA name like Asia/Shanghai, Europe/Berlin or America/New_York.`,
        buttons: [],
        notice: "Unknown time zone.",
      };
    // The canonical spelling ("asia/shanghai" → "Asia/Shanghai").
    const name = new Intl.DateTimeFormat("en-US", { timeZone: arg }).resolvedOptions().timeZone;
    return changeThen(
      asker,
      { timeZone: name === serverZone ? null : name },
      () => plain(`✅ Time zone here is now ${name}. Times in /remind and schedules are read in it.`),
      `Time zone: ${name}`,
    );
  };

  const scheduleCommand =
    (which: keyof ScheduleCommands) =>
    async (asker: SettingsAsker, arg: string): Promise<SettingsAnswer> =>
      deps.schedules
        ? deps.schedules[which](asker, arg, await zoneOf(asker))
        : plain("Schedules are not available here.");

  const handlers = {
    settings,
    model,
    think,
    reasoning,
    persona,
    tools,
    timezone,
    voice,
    remind: scheduleCommand("remind"),
    schedules: scheduleCommand("schedules"),
  } as const;

  const service: SettingsPort = {
    run: (asker, command, args) => handlers[command](asker, args.trim()),
    async press(asker, action) {
      if (!action.startsWith(SETTINGS_ACTION_PREFIX)) return undefined;
      const body = action.slice(SETTINGS_ACTION_PREFIX.length);
      const space = body.indexOf(" ");
      const command = space < 0 ? body : body.slice(0, space);
      if (!isSettingsCommand(command)) return undefined;
      return service.run(asker, command, space < 0 ? "" : body.slice(space + 1));
    },
    async complete(command, typed) {
      const pool = command === "model" ? await deps.models.list() : command === "tools" ? toolNames() : [];
      const needle = typed.trim().toLowerCase();
      // Discord shows at most 25 suggestions.
      return pool.filter((name) => name.toLowerCase().includes(needle)).slice(0, 25);
    },
    async threads(conversationKey) {
      return (await store.overrides(conversationKey)).threads;
    },
  };
  return service;
}
