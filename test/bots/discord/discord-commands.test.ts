/** Text commands as users type them in Discord. */
import { expect, test } from "vitest";
import { parseTextCommand } from "../../../src/bots/discord/discord-commands.js";

test("known commands, with arguments, a bot suffix or odd case", () => {
  expect(parseTextCommand("/reset")).toBe("reset");
  expect(parseTextCommand("  /STOP now please")).toBe("stop");
  expect(parseTextCommand("/help@TestBot")).toBe("help");
});

test("unknown commands are recognised as such (they get the help text)", () => {
  expect(parseTextCommand("/imagine a cat")).toBe("unknown");
});

test("questions are not commands, even when they start with a slash", () => {
  expect(parseTextCommand("what does /reset do?")).toBeUndefined();
  expect(parseTextCommand("/etc/hosts: what is it for?")).toBeUndefined();
  expect(parseTextCommand("/ hello")).toBeUndefined();
});
