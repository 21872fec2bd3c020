/**
 * What a person starting a role sees: on a terminal, pretty log lines (a time, a level, the
 * message), not JSON with epoch milliseconds; JSON when the logs go to a pipe or a file
 * (LOG_FORMAT overrides both ways); and a bots role without a platform token says it has
 * nothing to do, in its log and on /healthz (503, so `docker compose ps` shows it unhealthy).
 */
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger, logFormatFor } from "../../src/observability/logger.js";
import { freePort } from "../support/free-port.js";
import { e2eTest } from "../support/fixtures.js";
import { startTmuxChat } from "../support/tmux-chat.js";
import { healthz } from "./support/ops-http.js";

function capture(): { stream: Writable; text(): string } {
  let text = "";
  const stream = new Writable({
    write(chunk, _encoding, callback) {
      text += String(chunk);
      callback();
    },
  });
  return { stream, text: () => text };
}

describe("log format", () => {
  it("auto is pretty on a terminal and JSON otherwise; json and pretty are taken as said", () => {
    expect(logFormatFor("auto", true)).toBe("pretty");
    expect(logFormatFor("auto", false)).toBe("json");
    expect(logFormatFor("json", true)).toBe("json");
    expect(logFormatFor("pretty", false)).toBe("pretty");
  });

  it("pretty lines read as a time, a level and the message, with secrets scrubbed as in JSON", () => {
    const out = capture();
    const secret = "sk-0123456789abcdef";
    const logger = createLogger({
      level: "info",
      name: "worker",
      secrets: [secret],
      destination: out.stream,
      format: "pretty",
    });
    logger.warn({ jobId: "tg:1:2" }, `model key ${secret} refused`);
    const line = out.text();
    expect(line).toMatch(/^\[\d\d:\d\d:\d\d\] WARN \(worker\): model key \[redacted\] refused\n/);
    expect(line).toContain('jobId: "tg:1:2"');
    expect(line).not.toContain(secret);
    expect(line).not.toMatch(/"level":|"time":\d/);
  });
});

describe("a role started by hand", { timeout: 90_000 }, () => {
  it("logs pretty lines on a terminal", async () => {
    const port = await freePort();
    const tty = startTmuxChat(
      { REDIS_URL: "redis://127.0.0.1:6379", KEY_PREFIX: "role-logs", HTTP_PORT: String(port) },
      { columns: 120, rows: 30 },
      ["bots"],
    );
    try {
      await expect.poll(() => tty.lines().join("\n"), { timeout: 60_000 }).toMatch(/INFO \(bots\): started/);
      const screen = tty.lines().join("\n");
      expect(screen).not.toMatch(/\{"level"/);
      expect(screen).toMatch(/WARN \(bots\): no platform token is set/);
    } finally {
      tty.close();
    }
  });

  e2eTest(
    "a bots role with no platform token warns that it has nothing to do, and /healthz says so",
    async ({ spawnRole, testRedis }) => {
      const redis = testRedis("idle-bots");
      const port = await freePort();
      const role = await spawnRole("bots", { REDIS_URL: redis.url, KEY_PREFIX: redis.prefix, HTTP_PORT: String(port) });
      expect(role.output()).toContain(
        '"msg":"no platform token is set (TELEGRAM_BOT_TOKEN, DISCORD_BOT_TOKEN) and WEB_CHAT is off: this process has nothing to do. Put a token in .env and restart; npm run chat needs none"',
      );
      const health = await healthz(`http://127.0.0.1:${port}`);
      expect(health.status).toBe(503);
      expect(health.body.checks).toEqual({ redis: "ok", platforms: "no platform token set: nothing to do" });
    },
  );
});
