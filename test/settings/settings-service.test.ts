/**
 * The settings commands, platform-free, over the real store (Redis) and the real model list
 * (HTTP to the fake model server): who may change what, the answers' texts and buttons, and
 * that a refused or invalid command changes nothing.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { SettingsAsker, SettingsPort } from "../../src/contracts/settings-port.js";
import { createSettingsService } from "../../src/settings/settings-service.js";
import { createSettingsStore, type SettingsStore } from "../../src/settings/settings-store.js";
import { createModelChoices } from "../../src/settings/model-choices.js";
import { startFakeOpenAI, type FakeOpenAI } from "../fakes/openai-server.js";
import { createTestRedis, type TestRedis } from "../support/redis.js";

const LONG_MODEL = "hf.co/unsloth/Qwen3-30B-A3B-Instruct-2507-GGUF:UD-Q4_K_XL";
const catalogue = () => [
  {
    source: "built-in",
    tools: [
      { name: "get_weather", description: "Current weather for a city. Uses wttr.in." },
      { name: "read_url", description: "Read a web page." },
    ],
  },
  { source: "mcp: files", tools: [{ name: "files__list", description: "List files." }] },
];

let t: TestRedis;
let model: FakeOpenAI;
let store: SettingsStore;
let service: SettingsPort;
beforeEach(async () => {
  t = createTestRedis("settings-cmd");
  model = await startFakeOpenAI({ models: ["qwen3-1.7b", "qwen3-8b", LONG_MODEL] });
  store = createSettingsStore({
    redis: t.redis,
    prefix: t.prefix,
    defaults: { model: "qwen3-1.7b", thinking: true, reasoning: "collapsed" },
  });
  service = createSettingsService({
    store,
    models: createModelChoices({ defaultModel: "qwen3-1.7b", baseUrl: model.url, apiKey: "sk-test" }),
    toolCatalogue: catalogue,
    botAdmins: ["tg:7"],
  });
});
afterEach(async () => {
  await model.close();
  await t.cleanup();
});

/** An asker in a group; counts how often the platform was asked whether they are an admin. */
function groupMember(userId: string, admin: boolean): SettingsAsker & { adminChecks: number } {
  const asker = {
    platform: "telegram" as const,
    conversationKey: "tg:-100",
    isPrivate: false,
    userId,
    adminChecks: 0,
    isChatAdmin: async () => {
      asker.adminChecks++;
      return admin;
    },
  };
  return asker;
}

describe("settings commands", () => {
  it("in a group a member may look at everything but every change is refused and nothing changes", async () => {
    const alice = groupMember("1", false);
    expect((await service.run(alice, "settings", "")).text).toContain("• Model: qwen3-1.7b (default)");
    expect((await service.run(alice, "model", "")).text).toContain(`qwen3-1.7b, qwen3-8b, ${LONG_MODEL}`);
    expect((await service.run(alice, "tools", "")).text).toContain("mcp: files:\n✅ files__list: List files.");
    expect(alice.adminChecks).toBe(0);

    const attempts: [Parameters<SettingsPort["run"]>[1], string][] = [
      ["model", "qwen3-8b"],
      ["think", "off"],
      ["reasoning", "full"],
      ["persona", "A pirate."],
      ["persona", "reset"],
      ["tools", "off read_url"],
      ["settings", "reset"],
    ];
    for (const [command, args] of attempts) {
      const answer = await service.run(alice, command, args);
      expect(answer, `/${command} ${args}`).toMatchObject({
        refused: true,
        text: "🔒 Only admins of this chat can change its settings. Anyone can look with /settings.",
      });
    }
    expect(await store.overrides("tg:-100")).toEqual({ toolsOff: [] });
  });

  it("a chat admin may change; a bot-wide admin may too, without asking the platform", async () => {
    const bob = groupMember("2", true);
    expect((await service.run(bob, "think", "off")).text).toContain(
      "✅ Thinking is now off here. It applies from the next answer.",
    );
    expect(bob.adminChecks).toBe(1);
    const root = groupMember("7", false);
    expect((await service.run(root, "reasoning", "full")).notice).toBe("Reasoning: full");
    expect(root.adminChecks).toBe(0);
    expect(await store.overrides("tg:-100")).toEqual({ thinking: false, reasoning: "full", toolsOff: [] });
    // Choosing the default again stores no choice: the conversation follows the default from then on.
    await service.run(bob, "think", "on");
    expect(await store.overrides("tg:-100")).toEqual({ reasoning: "full", toolsOff: [] });
  });

  it("unknown models and tools, bad switches and over-long personas get a clear answer and change nothing", async () => {
    const me: SettingsAsker = {
      platform: "discord",
      conversationKey: "dc:1",
      isPrivate: true,
      userId: "9",
      isChatAdmin: async () => false,
    };
    expect((await service.run(me, "model", "gpt-9")).text).toContain(
      `Unknown model “gpt-9”. Choose one of: qwen3-1.7b, qwen3-8b, ${LONG_MODEL}.`,
    );
    expect((await service.run(me, "tools", "off get_wether")).text).toContain(
      "No tool named “get_wether” here. Tools: get_weather, read_url, files__list.",
    );
    expect((await service.run(me, "think", "sometimes")).text).toContain("“sometimes” is neither on nor off.");
    expect((await service.run(me, "reasoning", "loud")).text).toContain("“loud” is not one of off, collapsed, full.");
    expect((await service.run(me, "persona", "🦜".repeat(1001))).text).toContain(
      "That persona has 1001 characters; at most 1000 fit. Nothing changed.",
    );
    expect(await store.overrides("dc:1")).toEqual({ toolsOff: [] });
    // 1000 characters as people count them (a parrot is one, not two UTF-16 units) fit.
    expect((await service.run(me, "persona", "🦜".repeat(1000))).text).toContain("✅ Persona set.");
    expect((await service.run(me, "model", "QWEN3-8B")).text).toContain("✅ Model here is now qwen3-8b.");
  });

  it("words that name Object.prototype's keys are no switch and no tool (/think constructor, /tools __proto__)", async () => {
    const me: SettingsAsker = {
      platform: "telegram",
      conversationKey: "tg:5",
      isPrivate: true,
      userId: "5",
      isChatAdmin: async () => false,
    };
    for (const word of ["constructor", "__proto__", "toString", "hasOwnProperty", "valueOf"]) {
      expect((await service.run(me, "think", word)).text).toContain(`“${word}” is neither on nor off.`);
      expect((await service.run(me, "tools", `${word} get_weather`)).text).toContain(
        "Use /tools on <name> or /tools off <name>.",
      );
    }
    expect(await store.overrides("tg:5")).toEqual({ toolsOff: [] });
  });

  it("/tools with 10,003 tools answers in pages of 20 buttons and a row to turn pages", async () => {
    const many = [
      ...catalogue(),
      {
        source: "mcp: many",
        tools: Array.from({ length: 10_000 }, (_, i) => ({ name: `many__tool_${i}`, description: `Tool ${i}.` })),
      },
    ];
    const paged = createSettingsService({
      store,
      models: createModelChoices({ defaultModel: "qwen3-1.7b", baseUrl: model.url, apiKey: "sk-test" }),
      toolCatalogue: () => many,
      botAdmins: [],
    });
    const me: SettingsAsker = {
      platform: "telegram",
      conversationKey: "tg:9",
      isPrivate: true,
      userId: "9",
      isChatAdmin: async () => false,
    };
    const first = await paged.run(me, "tools", "");
    expect(first.buttons.flat()).toHaveLength(21);
    expect(first.buttons.at(-1)).toEqual([{ label: "Page 2 ▶", action: "cfg:tools page 2" }]);
    expect(first.text).toContain("Tools here (✅ on, ⛔ off), page 1 of 501:");
    expect(first.text.length).toBeLessThan(4096);

    const second = await paged.press(me, "cfg:tools page 2");
    expect(second?.text).toContain("page 2 of 501");
    expect(second?.text).toContain("many__tool_17:");
    expect(second?.buttons.at(-1)?.map((b) => b.label)).toEqual(["◀ Page 1", "Page 3 ▶"]);
    const last = await paged.run(me, "tools", "page 9999");
    expect(last.text).toContain("page 501 of 501");
    expect(last.buttons.at(-1)?.map((b) => b.label)).toEqual(["◀ Page 500"]);

    // Switching a tool answers with the page that shows it.
    const switched = await paged.run(me, "tools", "off many__tool_5000");
    expect(switched.text).toContain("✅ many__tool_5000 is now off here.");
    expect(switched.text).toContain("⛔ many__tool_5000:");
    expect(switched.text).toContain("page 251 of 501");
    const unknown = await paged.run(me, "tools", "off nothing");
    expect(unknown.text).toContain("and 9983 more.");
    expect(unknown.text.length).toBeLessThan(4096);
  });

  it("buttons replay commands; a name too long for a button's 64 bytes goes by its position", async () => {
    const me: SettingsAsker = {
      platform: "telegram",
      conversationKey: "tg:5",
      isPrivate: true,
      userId: "5",
      isChatAdmin: async () => false,
    };
    const menu = await service.run(me, "model", "");
    const actions = menu.buttons.flat().map((b) => b.action);
    expect(actions).toEqual(["cfg:model qwen3-1.7b", "cfg:model qwen3-8b", "cfg:model #2"]);
    for (const action of actions) expect(Buffer.byteLength(action)).toBeLessThanOrEqual(64);
    const pressed = await service.press(me, "cfg:model #2");
    expect(pressed?.text).toContain(`✅ Model here is now ${LONG_MODEL}.`);
    expect(pressed?.buttons.flat().find((b) => b.label.startsWith("•"))?.label).toBe(`• ${LONG_MODEL}`);
    expect((await store.read("tg:5")).model).toBe(LONG_MODEL);
    expect(await service.press(me, "stop")).toBeUndefined();
    expect(await service.press(me, "cfg:format c:")).toBeUndefined();
  });

  it("/voice shows the mode (auto by default), switches it for admins only, and says when speech is not set up", async () => {
    const alice = groupMember("1", false);
    const shown = await service.run(alice, "voice", "");
    expect(shown.text).toContain("Spoken answers here: auto (default): a voice note is answered with voice too.");
    expect(shown.text).toContain("Speech is not set up on this bot (TTS_BASE_URL)");
    expect(shown.buttons).toEqual([
      [
        { label: "off", action: "cfg:voice off" },
        { label: "on", action: "cfg:voice on" },
        { label: "• auto", action: "cfg:voice auto" },
      ],
    ]);
    expect(await service.run(alice, "voice", "off")).toMatchObject({ refused: true });
    expect((await service.run(alice, "voice", "loud")).text).toContain("“loud” is not one of off, on, auto.");
    expect(await store.overrides("tg:-100")).toEqual({ toolsOff: [] });

    const withSpeech = createSettingsService({
      store,
      models: createModelChoices({ defaultModel: "qwen3-1.7b", baseUrl: model.url, apiKey: "sk-test" }),
      toolCatalogue: catalogue,
      botAdmins: [],
      speech: true,
    });
    const bob = groupMember("2", true);
    const changed = await withSpeech.run(bob, "voice", "OFF");
    expect(changed.text).toContain("✅ Spoken answers are now off here.");
    expect(changed.text).toContain("Spoken answers here: off: answers stay text.");
    expect(changed.text).not.toContain("not set up");
    expect(changed.notice).toBe("Voice: off");
    expect(await store.overrides("tg:-100")).toEqual({ voice: "off", toolsOff: [] });
    expect((await withSpeech.press(bob, "cfg:voice on"))?.text).toContain("every answer is also spoken");
    expect((await withSpeech.run(bob, "settings", "")).text).toContain("• Spoken answers: on\n");
    // Back to the default: no choice stored.
    await withSpeech.run(bob, "voice", "auto");
    expect(await store.overrides("tg:-100")).toEqual({ toolsOff: [] });
    const terminal: SettingsAsker = { ...bob, platform: "terminal", isPrivate: true };
    expect((await withSpeech.run(terminal, "voice", "")).text).toContain("here they stay text");
    // Where answers cannot be spoken, /settings offers no /voice (Telegram's view above does).
    const terminalSettings = (await withSpeech.run(terminal, "settings", "")).text;
    expect(terminalSettings).not.toMatch(/voice|Spoken/i);
    expect(terminalSettings).toContain("/persona <text>, /tools. /settings reset restores the defaults.");
    expect((await withSpeech.run(bob, "settings", "")).text).toContain("/tools, /voice off|on|auto.");
  });

  it("completes model and tool names as they are typed", async () => {
    expect(await service.complete("model", "8B")).toEqual(["qwen3-8b"]);
    expect(await service.complete("tools", "read")).toEqual(["read_url"]);
    expect(await service.complete("think", "o")).toEqual([]);
  });
});

describe("/settings threads", () => {
  it("a Discord channel's admin switches threads per question; a member is refused; elsewhere it is not a setting", async () => {
    const discordAsker = (admin: boolean): SettingsAsker => ({
      platform: "discord",
      conversationKey: "dc:42",
      isPrivate: false,
      userId: admin ? "2" : "1",
      isChatAdmin: async () => admin,
    });
    expect(await service.threads?.("dc:42")).toBeUndefined();
    expect(await service.run(discordAsker(false), "settings", "threads on")).toMatchObject({ refused: true });
    expect(await service.threads?.("dc:42")).toBeUndefined();

    expect((await service.run(discordAsker(true), "settings", "threads on")).text).toMatch(/thread of its own/);
    expect(await service.threads?.("dc:42")).toBe(true);
    expect((await service.run(discordAsker(false), "settings", "threads")).text).toMatch(
      /^A thread per question here: on\./,
    );
    expect((await service.run(discordAsker(false), "settings", "")).text).toContain("• A thread per question: on");
    await service.run(discordAsker(true), "settings", "threads off");
    expect(await service.threads?.("dc:42")).toBe(false);
    await service.run(discordAsker(true), "settings", "reset");
    expect(await service.threads?.("dc:42")).toBeUndefined();

    const telegram = groupMember("7", true);
    expect((await service.run(telegram, "settings", "threads on")).text).toBe(
      "Threads per question are a setting of Discord server channels.",
    );
    expect(await store.overrides("tg:-100")).toEqual({ toolsOff: [] });
  });
});

describe("model choices", () => {
  it("MODEL_CHOICES wins over the server; the default model is always offered", async () => {
    const choices = createModelChoices({
      configured: ["qwen3-4b"],
      defaultModel: "qwen3-1.7b",
      baseUrl: model.url,
      apiKey: "k",
    });
    expect(await choices.list()).toEqual(["qwen3-1.7b", "qwen3-4b"]);
  });

  it("a server that cannot be asked leaves the default as the only choice, and says why in the log", async () => {
    const warnings: string[] = [];
    const choices = createModelChoices({
      defaultModel: "qwen3-1.7b",
      baseUrl: "http://127.0.0.1:1/v1",
      apiKey: "k",
      logger: { warn: (_o, msg) => warnings.push(String(msg)) },
    });
    expect(await choices.list()).toEqual(["qwen3-1.7b"]);
    expect(warnings).toEqual(["could not list the server's models; offering the default only"]);
  });
});
