/**
 * Model output that tries to act on the reader in Telegram: `tg:` links (a proxy that reroutes the
 * app, a login, a group join, a profile) and plain `@username` mentions that would notify members
 * of a group. Checked on what Telegram makes of the bot's message (its entities), through the stack.
 */
import { describe, expect } from "vitest";
import type { FakeChat, FakeUser } from "../fakes/telegram-server.js";
import { textAnswer } from "../fakes/openai-server.js";
import { startHostileRig } from "../security/hostile-kit.js";
import { e2eTest } from "../support/fixtures.js";

const group: FakeChat = { id: -1007766554433, type: "supergroup", title: "Neighbours" };
const alice: FakeUser = { id: 3001, first_name: "Alice", username: "alice_w" };

describe("links and mentions in model output, Telegram", () => {
  e2eTest(
    "only http(s) and mailto links survive, and only the asker's own @username can notify",
    async ({ closeAfter }) => {
      const rig = closeAfter(await startHostileRig({ platform: "telegram" }));
      const tg = rig.tg!;
      rig.model.script([
        textAnswer(
          "Ask @carol_admin or @dave99, or me, @alice_w. Mail x@example.org.\n" +
            "[fast proxy](tg://proxy?server=198.51.100.7&port=443&secret=ee00) [log in](tg://login?token=AAA) " +
            "[join us](tg://join?invite=abc) <tg://resolve?domain=evil_bot> [site](https://example.org/a) [mail](mailto:a@example.org)\n" +
            "`@in_code` stays as written.",
        ),
      ]);
      tg.userSays(group, alice, "@test_bot who should I ask?");
      const answer = await tg.waitFor(() => tg.botMessages(group.id).find((m) => m.text.includes("stays as written")), {
        timeoutMs: 10_000,
        what: "the answer",
      });

      const links = answer.entities.filter((e) => e.type === "text_link").map((e) => (e as { url: string }).url);
      expect(links).toEqual(["https://example.org/a", "mailto:a@example.org"]);
      const mentions = answer.entities
        .filter((e) => e.type === "mention")
        .map((e) => answer.text.slice(e.offset, e.offset + e.length));
      expect(mentions).toEqual(["@alice_w"]);
      // Still readable: the names are there, and the labels of the refused links are plain text.
      const shown = answer.text.replace(/\u2060/g, "");
      for (const words of ["@carol_admin", "@dave99", "x@example.org", "fast proxy", "log in", "join us", "@in_code"])
        expect(shown).toContain(words);
    },
  );
});
