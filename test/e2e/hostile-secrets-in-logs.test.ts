/**
 * Secrets never reach the log, and errors reach the user short, with the bot run
 * exactly as deployed: `src/main.ts all` as a child process, its pino output captured.
 * Requests fail with a secret inside the error: the model server rejects the key and
 * echoes it (as hosted APIs do), and Telegram's connection breaks under the worker's
 * sendMessage (the underlying fetch error names the URL, /bot<token>/sendMessage; that
 * error object is serialised by the logger in test/security/log-redaction.test.ts).
 * The log must tell what went wrong without any secret; the chat must show one short
 * line without internals, or the answer once the connection is back.
 */
import { describe, expect } from "vitest";
import { privateChat } from "../fakes/telegram-server.js";
import { httpError, textAnswer } from "../fakes/openai-server.js";
import { e2eTest } from "../support/fixtures.js";

const API_KEY = "sk-live-0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d";
const ADMIN_TOKEN = "admin-5d4c3b2a1f0e9d8c7b6a";

/** Every fragment of 12 characters of `secret` that appears in `text`. */
function piecesOf(secret: string, text: string): string[] {
  const found: string[] = [];
  for (let i = 0; i + 12 <= secret.length; i++)
    if (text.includes(secret.slice(i, i + 12))) found.push(secret.slice(i, i + 12));
  return found;
}

describe("secrets in failing requests, with the bot as a real process", () => {
  e2eTest(
    "the log explains the failure without the key or the token; the chat shows one short line, or the answer",
    async ({ fakeTelegram, fakeModel, testRedis, spawnRole }) => {
      const tg = await fakeTelegram();
      const model = await fakeModel();
      const redis = testRedis("logs");
      const alice = { id: 1001, first_name: "Alice" };
      const bob = { id: 1002, first_name: "Bob" };
      model.setHandler((request) => {
        const asked = JSON.stringify(request.body.messages?.at(-1)?.content ?? "");
        // A hosted API answers a bad key with the key itself in the message (OpenAI masks part of it; some proxies do not).
        if (asked.includes("first"))
          return httpError(
            401,
            `Incorrect API key provided: ${request.headers.authorization?.replace(/^Bearer /, "")}`,
            "invalid_request_error",
          );
        return textAnswer("fine");
      });
      const bot = await spawnRole(
        "all",
        {
          REDIS_URL: redis.url,
          KEY_PREFIX: redis.prefix,
          TELEGRAM_BOT_TOKEN: tg.token,
          TELEGRAM_API_ROOT: tg.apiRoot,
          OPENAI_BASE_URL: model.url,
          OPENAI_API_KEY: API_KEY,
          ADMIN_TOKEN,
          LOG_LEVEL: "debug",
          QUEUE_ATTEMPTS: "2",
          QUEUE_RETRY_BACKOFF_MS: "100",
        },
        { stop: "terminate" },
      );

      tg.userSays(privateChat(alice), alice, "first question");
      await tg.waitFor(() => tg!.botMessages(alice.id).some((m) => m.text.startsWith("⚠️")), {
        timeoutMs: 10_000,
        what: "the failure line",
      });

      // The connection to Telegram breaks twice under the worker's sendMessage; the answer still lands.
      tg.failNext("sendMessage", 2, { networkError: true });
      tg.userSays(privateChat(bob), bob, "second question");
      await tg.waitFor(() => tg!.visibleText(bob.id) === "fine", {
        timeoutMs: 10_000,
        what: "the answer after the network errors",
      });
      expect(tg.calls("sendMessage").filter((c) => c.status === 0)).toHaveLength(2);
      // The second question's outcome line is the last one the worker writes for it.
      await expect.poll(() => bot.output(), { timeout: 15_000 }).toMatch(/"outcome":"answered"/);

      const log = bot.output();
      // The failure is in the log, with what an operator needs...
      expect(log).toMatch(/"outcome":"given_up".*Incorrect API key provided: \[redacted\]/);
      // ...and no secret, whole or in part.
      for (const secret of [API_KEY, tg.token, ADMIN_TOKEN]) expect(piecesOf(secret, log), secret).toEqual([]);

      // The user sees one short line: no stack, no URL, no error class, no status, no secret.
      const failure = tg.visibleText(alice.id);
      expect(failure).toMatch(/^⚠️ [^\n]{10,90}$/);
      expect(failure).not.toMatch(/https?:|127\.0\.0\.1|Error|ECONN|\bat \S+:\d+|401|sk-|bot\d/);
    },
  );
});
