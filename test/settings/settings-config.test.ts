/** MODEL_CHOICES and ADMIN_USER_IDS as operators write them, and the errors for what does not fit. */
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config/load-config.js";

describe("settings configuration", () => {
  it("parses comma-separated models and platform-tagged admin ids; both may be left empty", () => {
    const config = loadConfig({ MODEL_CHOICES: " qwen3-1.7b, qwen3-4b ,", ADMIN_USER_IDS: "tg:123, DC:456" });
    expect(config.MODEL_CHOICES).toEqual(["qwen3-1.7b", "qwen3-4b"]);
    expect(config.ADMIN_USER_IDS).toEqual(["tg:123", "dc:456"]);
    const empty = loadConfig({ MODEL_CHOICES: "", ADMIN_USER_IDS: "" });
    expect(empty.MODEL_CHOICES).toBeUndefined();
    expect(empty.ADMIN_USER_IDS).toEqual([]);
  });

  it("names the variable and what it expects", () => {
    expect(() => loadConfig({ ADMIN_USER_IDS: "123" })).toThrow(ConfigError);
    expect(() => loadConfig({ ADMIN_USER_IDS: "tg:123,alice" })).toThrow(
      /ADMIN_USER_IDS: expected comma-separated tg:<id> or dc:<id>/,
    );
    expect(() => loadConfig({ MODEL_CHOICES: " , ," })).toThrow(/MODEL_CHOICES: expected comma-separated model names/);
  });
});
