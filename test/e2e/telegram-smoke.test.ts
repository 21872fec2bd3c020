/** A first end-to-end check: a Telegram private chat answered through queue, worker and fake model. */
import { describe, expect } from "vitest";
import { privateChat } from "../fakes/telegram-server.js";
import { textAnswer, toolCallAnswer } from "../fakes/openai-server.js";
import { e2eTest } from "../support/fixtures.js";

describe("Telegram private chat, end to end", () => {
  e2eTest(
    "streams a tool-using answer and leaves the final text visible",
    async ({ fakeTelegram, fakeModel, fakeWeb, startStack }) => {
      const tg = await fakeTelegram();
      const model = await fakeModel();
      const web = await fakeWeb();
      model.script([
        toolCallAnswer(
          [
            { name: "get_weather", arguments: { city: "北京" } },
            { name: "get_weather", arguments: { city: "上海" } },
          ],
          { interleave: true },
        ),
        textAnswer("北京今天更热：31°C，上海 26°C。"),
      ]);
      const _stack = await startStack({
        env: {
          TELEGRAM_BOT_TOKEN: tg.token,
          TELEGRAM_API_ROOT: tg.apiRoot,
          OPENAI_BASE_URL: model.url,
          WEATHER_API_BASE: web.url,
        },
      });
      const alice = { id: 1001, first_name: "Alice" };
      tg.userSays(privateChat(alice), alice, "北京和上海今天哪里更热？");
      await tg.waitFor(() => tg!.visibleText(alice.id).includes("北京今天更热"), {
        timeoutMs: 15_000,
        what: "the answer",
      });
      expect(tg.visibleText(alice.id)).toContain("北京今天更热：31°C，上海 26°C。");
      expect(tg.floodViolations()).toEqual([]);
      const toolResults = (
        model.requests[1]!.body as { messages: { role: string; content: string }[] }
      ).messages.filter((m) => m.role === "tool");
      expect(toolResults.map((m) => JSON.parse(m.content).temperature_c).sort()).toEqual([26, 31]);
    },
  );
});
