/** The settings store against a real Redis: choices over defaults, per-field changes, bad stored values, the read along with the history. */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSettingsStore } from "../../src/settings/settings-store.js";
import { createHistoryStore } from "../../src/history/history-store.js";
import { conversationSettingsKey } from "../../src/redis/keys.js";
import { createTestRedis, type TestRedis } from "../support/redis.js";

let t: TestRedis;
beforeEach(() => {
  t = createTestRedis("settings");
});
afterEach(async () => {
  await t.cleanup();
});

const defaults = { model: "qwen3-1.7b", thinking: true, reasoning: "collapsed" as const };

function storeWithLog() {
  const warnings: { obj: Record<string, unknown>; msg?: string }[] = [];
  const store = createSettingsStore({
    redis: t.redis,
    prefix: t.prefix,
    defaults,
    logger: { warn: (obj, msg) => warnings.push({ obj: obj as Record<string, unknown>, msg }) },
  });
  return { store, warnings };
}

describe("settings store", () => {
  it("a conversation without choices runs on the defaults; its choices apply only to it", async () => {
    const { store } = storeWithLog();
    expect(await store.read("tg:1")).toEqual({ ...defaults, toolsOff: [] });
    await store.change("tg:1", {
      model: "qwen3-4b",
      thinking: false,
      reasoning: "full",
      persona: "A pirate.",
      tools: { read_url: false, get_news: false },
    });
    expect(await store.read("tg:1")).toEqual({
      model: "qwen3-4b",
      thinking: false,
      reasoning: "full",
      persona: "A pirate.",
      toolsOff: ["get_news", "read_url"],
    });
    expect(await store.read("tg:2")).toEqual({ ...defaults, toolsOff: [] });
  });

  it("null goes back to the default, a tool switched on again leaves the list, reset forgets everything", async () => {
    const { store } = storeWithLog();
    await store.change("dc:5", { model: "qwen3-4b", persona: "Short.", tools: { read_url: false, get_time: false } });
    await store.change("dc:5", { model: null, tools: { read_url: true } });
    expect(await store.overrides("dc:5")).toEqual({ persona: "Short.", toolsOff: ["get_time"] });
    await store.reset("dc:5");
    expect(await store.overrides("dc:5")).toEqual({ toolsOff: [] });
    expect(await t.redis.exists(conversationSettingsKey(t.prefix, "dc:5"))).toBe(0);
  });

  it("a stored value that does not parse falls back to the default with a log line, the others still apply", async () => {
    const { store, warnings } = storeWithLog();
    await t.redis.hset(conversationSettingsKey(t.prefix, "tg:9"), {
      model: "qwen3-4b",
      thinking: "maybe",
      reasoning: "loud",
      persona: "x".repeat(1001),
      "tool:get_time": "sideways",
      colour: "blue",
    });
    expect(await store.read("tg:9")).toEqual({ ...defaults, model: "qwen3-4b", toolsOff: [] });
    expect(warnings.map((w) => w.obj.field).sort()).toEqual([
      "colour",
      "persona",
      "reasoning",
      "thinking",
      "tool:get_time",
    ]);
    // The stored value itself may be anything: only its size is logged.
    expect(warnings.find((w) => w.obj.field === "persona")?.obj).toEqual({
      conversation: "tg:9",
      field: "persona",
      length: 1001,
    });
    expect(warnings[0]?.msg).toBe("ignoring an invalid stored setting; the default applies");
  });

  it("the worker's read comes with the history in one pipeline", async () => {
    const { store } = storeWithLog();
    const history = createHistoryStore({
      redis: t.redis,
      prefix: t.prefix,
      maxMessages: 40,
      maxTokens: 6000,
      ttlSeconds: 3600,
    });
    await history.append("tg:3", [
      { role: "user", content: "hi" },
      { role: "assistant", content: "hello" },
    ]);
    await store.change("tg:3", { thinking: false });
    const loaded = await history.loadWith("tg:3", store.readAlong("tg:3"));
    expect(loaded.messages).toEqual([
      { role: "user", content: "hi" },
      { role: "assistant", content: "hello" },
    ]);
    expect(loaded.also).toEqual({ ...defaults, thinking: false, toolsOff: [] });
  });

  it("conversation keys with braces or percent signs get keys of their own", async () => {
    const { store } = storeWithLog();
    await store.change("term:{a}", { model: "m1" });
    await store.change("term:%7Ba%7D", { model: "m2" });
    expect((await store.read("term:{a}")).model).toBe("m1");
    expect((await store.read("term:%7Ba%7D")).model).toBe("m2");
  });
});
