/**
 * A Telegram webhook update whose handling stalls past the webhook deadline and then fails (Redis
 * paused, then read-only), against the real bots role as a child process. It used to kill the
 * process (grammY's timeout left the late rejection unhandled) with a crash dump holding the bot
 * token. Now: the update is answered non-2xx (Telegram delivers it again), the role keeps running,
 * the token never reaches its output, and the same update is taken once Redis is writable again.
 */
import { createHash } from "node:crypto";
import { Redis } from "ioredis";
import { describe, expect, vi } from "vitest";
import { freePort } from "../support/free-port.js";
import { e2eTest } from "../support/fixtures.js";

const user = { id: 5001, is_bot: false, first_name: "Walt" };

function update(updateId: number, messageId: number, text: string): object {
  return {
    update_id: updateId,
    message: {
      message_id: messageId,
      date: Math.floor(Date.now() / 1000),
      chat: { id: user.id, type: "private", first_name: user.first_name },
      from: user,
      text,
    },
  };
}

describe("a webhook update that stalls, then fails", () => {
  e2eTest(
    "gets a non-2xx answer, leaves the role running, and never prints the token",
    async ({ privateRedis, closeAfter, fakeTelegram, spawnRole }) => {
      const redis = await privateRedis();
      const admin = new Redis(redis.url, { maxRetriesPerRequest: 1 });
      closeAfter({ close: () => admin.disconnect() });
      const tg = await fakeTelegram();
      const port = await freePort();
      const role = await spawnRole("bots", {
        REDIS_URL: redis.url,
        KEY_PREFIX: "hook",
        HTTP_PORT: String(port),
        TELEGRAM_BOT_TOKEN: tg.token,
        TELEGRAM_API_ROOT: tg.apiRoot,
        TELEGRAM_WEBHOOK_URL: "https://bot.example.org/tg-hook",
      });
      const secret = createHash("sha256").update(`webhook:${tg.token}`).digest("hex");
      expect(tg.webhookInfo()).toEqual({ url: "https://bot.example.org/tg-hook", secretToken: secret });
      const post = async (body: object) => {
        const started = Date.now();
        const res = await fetch(`http://127.0.0.1:${port}/tg-hook`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-telegram-bot-api-secret-token": secret },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(20_000),
        });
        return { status: res.status, ms: Date.now() - started };
      };

      // Read-only Redis: the update cannot be enqueued, and says so at once.
      await admin.call("REPLICAOF", "127.0.0.1", String(await freePort()));
      expect((await post(update(900_001, 11, "first question"))).status).toBe(500);

      // Paused, then still read-only: the answer comes at the deadline, the failure after it.
      await admin.call("CLIENT", "PAUSE", "11500", "ALL");
      const stalled = await post(update(900_002, 12, "second question"));
      expect(stalled.status).toBeGreaterThanOrEqual(500);
      expect(stalled.ms).toBeGreaterThanOrEqual(9_000);
      let exited = false;
      void role.exited.then(() => (exited = true));
      // Past the moment the stalled handling rejects (it logs so).
      await vi.waitFor(
        () => {
          if (!/webhook update failed after its deadline/.test(role.output()) && !exited)
            throw new Error("the stalled update's failure was not logged yet");
        },
        { timeout: 15_000, interval: 50 },
      );

      // Writable again: Telegram's redelivery of the same update is taken, by the same process.
      await admin.call("REPLICAOF", "NO", "ONE");
      const redelivered = await post(update(900_002, 12, "second question")).catch((error: unknown) => ({
        status: String(error),
      }));
      expect(exited, role.output().slice(-2000)).toBe(false);
      expect(redelivered.status).toBe(200);
      expect(await admin.keys("hook:*")).not.toEqual([]);

      const output = role.output();
      expect(output).not.toContain(tg.token);
      expect(output).not.toContain(tg.token.split(":")[1]!);
      expect(output).toMatch(/webhook update failed after its deadline/);
    },
    60_000,
  );
});
