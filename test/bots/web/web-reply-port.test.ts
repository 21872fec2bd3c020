/**
 * The web chat's reply port on a real Redis: the loop's events land in the conversation's stream in
 * order, a retry's attempt is marked so the page starts over, only the final text of the reply is
 * kept, secrets are scrubbed from every event, and the stream reads back from any point.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Redis } from "ioredis";
import type { AgentEvent } from "../../../src/contracts/agent-events.js";
import { createWebEventLog, type WebEventLog } from "../../../src/bots/web/web-event-log.js";
import { createWebReplyPortFactory } from "../../../src/bots/web/web-reply-port.js";
import { withSecretsScrubbed } from "../../../src/answer/secret-scrubbing-port.js";
import { createSecretScrubber } from "../../../src/security/secret-scrubber.js";
import { inboundMessage } from "../../support/inbound-message.js";
import { createTestRedis, type TestRedis } from "../../support/redis.js";

let redis: TestRedis;
let log: WebEventLog;
const errors: unknown[] = [];
const message = inboundMessage({
  platform: "web",
  chatId: "ada",
  messageId: "m1",
  author: { id: "ada", displayName: "ada" },
});

beforeEach(() => {
  redis = createTestRedis("webport");
  log = createWebEventLog({ redis: redis.redis, prefix: redis.prefix, ttlSeconds: 60 });
  errors.length = 0;
});
afterEach(async () => {
  await redis.cleanup();
});

const factory = () => createWebReplyPortFactory({ log, onError: (error) => errors.push(error) });
const events = async () => (await log.read(message.conversationKey, "0")).map((e) => e.event);

describe("web reply port", () => {
  it("appends the loop's events in order, then the reply's final text, under the message's id", async () => {
    const port = factory()(message);
    const loop: AgentEvent[] = [
      { type: "reasoning-delta", round: 1, text: "two cities" },
      { type: "tool-call", round: 1, id: "a", name: "get_weather", arguments: '{"city":"北京"}' },
      { type: "tool-call", round: 1, id: "b", name: "get_weather", arguments: '{"city":"上海"}' },
      {
        type: "tool-result",
        round: 1,
        id: "b",
        name: "get_weather",
        ok: true,
        output: "x".repeat(5000),
        durationMs: 12.4,
      },
      { type: "tool-result", round: 1, id: "a", name: "get_weather", ok: false, output: "timeout", durationMs: 15 },
      { type: "round-finish", round: 1, reason: "tool_calls" },
      { type: "text-delta", round: 2, text: "北京" },
      { type: "text-delta", round: 2, text: "更热" },
      { type: "finish", reason: "stop", text: "北京更热", messages: [], rounds: 2 },
    ];
    const id = await port.send({ text: "…" }, { final: false });
    for (const event of loop) port.observe?.(event);
    await port.edit(id, { text: "✅ get_weather(北京)\n\n北京更热" }, { final: true });

    const got = await events();
    expect(got.map((e) => e.kind)).toEqual([
      "begin",
      "reasoning",
      "tool-call",
      "tool-call",
      "tool-result",
      "tool-result",
      "round",
      "text",
      "text",
      "final",
    ]);
    expect(got.every((e) => !("job" in e) || e.job === "m1")).toBe(true);
    expect(got[4]).toMatchObject({ kind: "tool-result", id: "b", ok: true, ms: 12 });
    expect((got[4] as { output: string }).output).toHaveLength(4001);
    expect(got.at(-1)).toEqual({ kind: "final", job: "m1", text: "✅ get_weather(北京)\n\n北京更热" });
    expect(errors).toEqual([]);
    // The stream expires with the conversation.
    expect(await redis.redis.ttl(`${redis.prefix}:web:events:web:ada`)).toBeGreaterThan(0);
  });

  it("marks each attempt, so the page drops what a failed one drew", async () => {
    factory()(message).observe?.({ type: "text-delta", round: 1, text: "half an ans" });
    const retry = factory()(message);
    retry.observe?.({ type: "text-delta", round: 1, text: "the answer" });
    await retry.send({ text: "the answer" }, { final: true });
    expect((await events()).map((e) => e.kind)).toEqual(["begin", "text", "begin", "text", "final"]);
  });

  it("scrubs the bot's secrets from every event the page would draw", async () => {
    const secret = "sk-live-0123456789abcdefSECRET";
    const port = withSecretsScrubbed(factory()(message), createSecretScrubber([secret]));
    port.observe?.({
      type: "tool-call",
      round: 1,
      id: "a",
      name: "read_url",
      arguments: `{"url":"http://x/?k=${secret}"}`,
    });
    port.observe?.({
      type: "tool-result",
      round: 1,
      id: "a",
      name: "read_url",
      ok: true,
      output: `key ${secret}`,
      durationMs: 1,
    });
    port.observe?.({ type: "text-delta", round: 2, text: `the key is ${secret}` });
    await port.send({ text: `the key is ${secret}` }, { final: true });
    const stored = JSON.stringify(await events());
    expect(stored).not.toContain("0123456789abcdef");
    expect(stored).toContain("[redacted]");
  });

  it("never draws a secret split across deltas, and the page's text still adds up to the whole answer", async () => {
    const secret = "sk-live-0123456789abcdefSECRET";
    const port = withSecretsScrubbed(factory()(message), createSecretScrubber([secret]));
    // The model writes the key in pieces shorter than anything the scrubber would match on its own.
    const pieces = ["Here: sk-live-01", "23456789", "abcdefSE", "CRET 🙂", " done"];
    const drawn: string[] = [];
    for (const text of pieces) {
      port.observe?.({ type: "text-delta", round: 1, text });
      drawn.push(
        (await events())
          .filter((e) => e.kind === "text")
          .map((e) => (e as { text: string }).text)
          .join(""),
      );
    }
    port.observe?.({ type: "finish", reason: "stop", text: pieces.join(""), messages: [], rounds: 1 });
    const page = (await events())
      .filter((e) => e.kind === "text")
      .map((e) => (e as { text: string }).text)
      .join("");
    // Whatever the page showed at any moment held no run of the key long enough to use.
    for (const shown of [...drawn, page]) expect(shown).not.toMatch(/0123456789|456789abcd|abcdefSECRET/i);
    // The key is blanked once, as in the final text, though no delta held enough of it to match alone.
    expect(page).toBe("Here: [redacted] 🙂 done");
    // Drawn as it comes: only what may go on into the key waits for the next delta, not for the end.
    expect(drawn[0]).toBe("Here: ");
    expect(drawn[3]).toBe("Here: [redacted] 🙂");
  });

  it("reads back after any event id, and follows new ones on a connection of its own", async () => {
    const ck = message.conversationKey;
    const first = await log.append(ck, { kind: "notice", text: "one" });
    await log.append(ck, { kind: "notice", text: "two" });
    expect((await log.read(ck, first)).map((e) => e.event)).toEqual([{ kind: "notice", text: "two" }]);
    const reader = new Redis(redis.url);
    try {
      const last = (await log.read(ck, "0")).at(-1)!.id;
      const followed = log.follow(reader, ck, last, 5000);
      await log.append(ck, { kind: "reset" });
      expect((await followed).map((e) => e.event)).toEqual([{ kind: "reset" }]);
    } finally {
      reader.disconnect();
    }
    await log.clear(ck);
    expect(await log.read(ck, "0")).toEqual([]);
  });
});
