import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config/load-config.js";

describe("loadConfig", () => {
  it("gives the documented defaults for an empty environment", () => {
    const c = loadConfig({});
    expect(c.REDIS_URL).toBe("redis://127.0.0.1:6379");
    expect(c.KEY_PREFIX).toBe("chatbot");
    expect(c.OPENAI_BASE_URL).toBe("http://127.0.0.1:8080/v1");
    expect(c.MODEL).toBe("qwen3-1.7b");
    expect(c.MODEL_SERVER).toBe("llama.cpp");
    expect(c.ENABLE_THINKING).toBe(true);
    expect(c.MAX_TOOL_ROUNDS).toBe(5);
    expect(c.WORKER_CONCURRENCY).toBe(8);
    expect(c.HTTP_PORT).toBe(9464);
    expect(c.SHOW_REASONING).toBe("collapsed");
    expect(c.USER_RATE_LIMIT).toBe(20);
    expect(c.HISTORY_MAX_MESSAGES).toBe(40);
    expect(c.HISTORY_TTL_SECONDS).toBe(604800);
    expect(c.TELEGRAM_BOT_TOKEN).toBeUndefined();
    expect(c.READ_URL_ALLOW_HOSTS).toEqual([]);
  });

  it("parses lists and booleans", () => {
    const c = loadConfig({
      ENABLE_THINKING: "false",
      TELEGRAM_ALLOWED_CHATS: "-1001, 42",
      READ_URL_ALLOW_HOSTS: "127.0.0.1:8080,Example.org:443",
    });
    expect(c.ENABLE_THINKING).toBe(false);
    expect(c.TELEGRAM_ALLOWED_CHATS).toEqual(["-1001", "42"]);
    expect(c.READ_URL_ALLOW_HOSTS).toEqual(["127.0.0.1:8080", "example.org:443"]);
  });

  it("parses Discord shard counts and id ranges, and names a bad one", () => {
    const c = loadConfig({ DISCORD_SHARD_COUNT: "auto", DISCORD_SHARD_IDS: "4,5, 0-2" });
    expect(c.DISCORD_SHARD_COUNT).toBe("auto");
    expect(c.DISCORD_SHARD_IDS).toEqual([0, 1, 2, 4, 5]);
    expect(loadConfig({ DISCORD_SHARD_COUNT: "8" }).DISCORD_SHARD_COUNT).toBe(8);
    expect(loadConfig({}).DISCORD_SHARD_IDS).toBeUndefined();
    expect(() => loadConfig({ DISCORD_SHARD_IDS: "0-x" })).toThrow(/DISCORD_SHARD_IDS.*0-3/);
  });

  it("names every bad variable and what it expects, without echoing secrets", () => {
    let error: unknown;
    try {
      loadConfig({ MAX_TOOL_ROUNDS: "zero", MODEL_SERVER: "gpt4all", REDIS_URL: "http://x", OPENAI_API_KEY: " " });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    expect(message).toMatch(/MAX_TOOL_ROUNDS: expected a whole number/);
    expect(message).toMatch(/MODEL_SERVER: expected one of llama\.cpp/);
    expect(message).toMatch(/REDIS_URL: expected a URL with scheme redis/);
    expect((error as ConfigError).problems.map((p) => p.variable).sort()).toEqual([
      "MAX_TOOL_ROUNDS",
      "MODEL_SERVER",
      "REDIS_URL",
    ]);
  });

  it("never prints a token value", () => {
    expect(() => loadConfig({ NEWS_RSS_URL: "https://news.example/rss" })).toThrow(
      /NEWS_RSS_URL: expected a URL template containing \{query\}/,
    );
  });

  it("takes switches in any letter case, as yes/no, on/off and 1/0 pass", () => {
    for (const value of ["True", "TRUE", "Yes", "ON", "1"])
      expect(loadConfig({ ENABLE_THINKING: value }).ENABLE_THINKING).toBe(true);
    for (const value of ["False", "NO", "Off", "0"])
      expect(loadConfig({ ENABLE_THINKING: value }).ENABLE_THINKING).toBe(false);
  });

  it("says what it got and what it accepts, also for a variable whose name merely contains TOKEN", () => {
    expect(() => loadConfig({ MODEL_MAX_TOKENS: "4k" })).toThrow(
      'MODEL_MAX_TOKENS: expected a whole number (got "4k")',
    );
    expect(() => loadConfig({ LOG_LEVEL: "verbose" })).toThrow(
      'LOG_LEVEL: expected fatal, error, warn, info, debug, trace or silent (got "verbose")',
    );
    expect(() => loadConfig({ ADMIN_TOKEN: "short" })).not.toThrow(/short/);
  });
});
