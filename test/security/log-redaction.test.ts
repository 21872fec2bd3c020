/**
 * The logger keeps secrets out of every line, whatever shape they arrive in: a real
 * grammY HttpError from a broken connection (its inner fetch error names the URL
 * /bot<token>/sendMessage), an echoed API key inside a ModelError, headers, nested
 * config, a secret with characters JSON escapes, and pieces of a secret. A control
 * logger without redaction shows each case really carries the secret.
 */
import { Api, HttpError } from "grammy";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { logSink } from "../support/log-sink.js";
import { createLogger } from "../../src/observability/logger.js";
import { ModelError } from "../../src/agent/model-error.js";
import { startFakeTelegram, type FakeTelegram } from "../fakes/telegram-server.js";

let tg: FakeTelegram | undefined;
afterEach(async () => {
  await tg?.close();
  tg = undefined;
});

const API_KEY = "sk-live-7e6d5c4b3a2f1e0d9c8b7a6f5e4d3c2b";
const ADMIN_TOKEN = 'adm"in\\tok-3f2e1d0c9b8a'; // a quote and a backslash: JSON escapes both

describe("log redaction", () => {
  it("a real Telegram network error, an echoed key and secrets in every shape never reach the log", async () => {
    tg = await startFakeTelegram();
    const api = new Api(tg.token, { apiRoot: tg.apiRoot });
    tg.failNext("sendMessage", 1, { networkError: true });
    const httpError = await api.sendMessage(1, "hello").then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(httpError).toBeInstanceOf(HttpError);

    const modelError = new ModelError(
      "auth",
      `The model server refused the key: 401 Incorrect API key provided: ${API_KEY}`,
      {
        cause: new Error(`POST with Authorization: Bearer ${API_KEY}`),
      },
    );
    const encodedToken = encodeURIComponent(tg.token); // "7000000001%3AAAFake…": the secret half survives encoding
    const write = (log: pino.Logger) => {
      log.warn({ err: httpError }, "job outcome");
      log.warn({ err: modelError }, "model refused the request");
      log.info({ headers: { authorization: `Bearer ${API_KEY}` }, token: tg!.token }, "request");
      log.info({ config: { TELEGRAM_BOT_TOKEN: tg!.token, ADMIN_TOKEN, OPENAI_API_KEY: API_KEY } }, "config");
      log.info(`webhook at https://example.org/hook?t=${encodedToken} with admin ${ADMIN_TOKEN}`);
    };

    const control = logSink();
    write(pino({ level: "info" }, control.stream));
    // The control shows every case really carries a secret (else the check below would prove nothing).
    expect(control.text()).toContain(`/bot${tg.token}/sendMessage`);
    expect(control.text()).toContain(API_KEY);
    expect(control.text()).toContain(JSON.stringify(ADMIN_TOKEN).slice(1, -1));

    const out = logSink();
    write(
      createLogger({ level: "info", secrets: [API_KEY, tg.token, undefined, ADMIN_TOKEN], destination: out.stream }),
    );
    const text = out.text();
    expect(text.split("\n").filter(Boolean)).toHaveLength(5);
    const secretHalf = tg.token.split(":")[1]!;
    for (const secret of [tg.token, secretHalf, API_KEY, ADMIN_TOKEN, JSON.stringify(ADMIN_TOKEN).slice(1, -1)]) {
      for (let i = 0; i + 12 <= secret.length; i++)
        expect(text, `piece of ${secret}`).not.toContain(secret.slice(i, i + 12));
    }
    // The URL-encoded form is a secret as a whole, like the token it encodes.
    expect(text).toContain("hook?t=[redacted] with admin [redacted]");
    // What an operator needs is still there.
    expect(text).toContain("Network request for 'sendMessage' failed");
    expect(text).toContain("Incorrect API key provided: [redacted]");
    expect(text).toContain("[redacted]");
  });
});
