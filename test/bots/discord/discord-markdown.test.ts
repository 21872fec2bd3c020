import { describe, expect, it } from "vitest";
import { neutraliseMentions, toDiscordMarkdown } from "../../../src/bots/discord/discord-markdown.js";

describe("toDiscordMarkdown", () => {
  it("defuses mass mentions and user/role mention syntax", () => {
    const out = toDiscordMarkdown("Hey @everyone and @here, ping <@123>, <@!456> and <@&789>");
    expect(out).not.toMatch(/@everyone|@here|<@\d+>|<@!\d+>|<@&\d+>/);
    // Still reads the same to a person: only an invisible joiner was added.
    expect(out.replace(/\u200D/g, "")).toBe("Hey @everyone and @here, ping <@123>, <@!456> and <@&789>");
  });

  it("closes a code fence left open mid-stream, and leaves balanced text alone", () => {
    expect(toDiscordMarkdown("Here:\n```js\nconst a = 1;")).toBe("Here:\n```js\nconst a = 1;\n```");
    expect(toDiscordMarkdown("```\nx\n```\n**bold**")).toBe("```\nx\n```\n**bold**");
  });

  it("is idempotent on already neutralised text", () => {
    const once = neutraliseMentions("@everyone <@&1>");
    expect(neutraliseMentions(once)).toBe(once);
  });
});
