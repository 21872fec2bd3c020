/**
 * The per-user rate limit (USER_RATE_LIMIT), on its own against a real Redis: the
 * (N+1)th message of a minute is refused politely and never reaches the queue, later
 * ones of the same flood are dropped silently, other users and the next minute are
 * unaffected, and two adapter processes share one count.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createLimitedGateway } from "../../src/ingress/limited-gateway.js";
import type { InboundMessage } from "../../src/contracts/inbound-message.js";
import { createMetrics } from "../../src/observability/metrics.js";
import { createRecordingGateway } from "../bots/telegram/recording-gateway.js";
import { createTestRedis, type TestRedis } from "../support/redis.js";
import { inboundMessage } from "../support/inbound-message.js";

let redis: TestRedis | undefined;
afterEach(async () => {
  await redis?.cleanup();
  redis = undefined;
});

let seq = 0;
function message(userId: string, platform: InboundMessage["platform"] = "telegram"): InboundMessage {
  seq++;
  return inboundMessage({
    platform,
    conversationKey: `tg:${userId}`,
    chatId: userId,
    messageId: String(seq),
    author: { id: userId, displayName: `user ${userId}` },
    text: `question ${seq}`,
    receivedAt: 0,
  });
}

describe("per-user rate limit", () => {
  it("lets N through a minute, refuses the next politely once, then drops the rest silently", async () => {
    redis = createTestRedis("limit");
    const inner = createRecordingGateway();
    const metrics = createMetrics();
    let clock = Date.UTC(2025, 5, 3, 6, 5, 10); // 10 s into a minute
    const gateway = createLimitedGateway({
      inner,
      redis: redis.redis,
      prefix: redis.prefix,
      perUserPerMinute: 3,
      metrics,
      now: () => clock,
    });

    const results = [];
    for (let i = 0; i < 6; i++) results.push(await gateway.enqueue(message("1001")));
    expect(results.map((r) => r.status)).toEqual(["queued", "queued", "queued", "refused", "refused", "refused"]);
    expect(results[3]).toEqual({
      status: "refused",
      reason: "You are sending messages faster than I can answer — please wait about 50 s and try again.",
    });
    expect(results.slice(4)).toEqual([{ status: "refused" }, { status: "refused" }]);
    // Nothing refused reached the queue.
    expect(inner.offered.map((m) => m.text)).toEqual(["question 1", "question 2", "question 3"]);

    // Another user, and the same user on another platform, have their own budget.
    expect((await gateway.enqueue(message("2002"))).status).toBe("queued");
    expect((await gateway.enqueue(message("1001", "discord"))).status).toBe("queued");

    // The next minute starts afresh.
    clock += 50_000;
    expect((await gateway.enqueue(message("1001"))).status).toBe("queued");

    const counted = await metrics.registry.getSingleMetricAsString("chatbot_messages_in_total");
    expect(counted).toMatch(/outcome="rate_limited"[^\n]* 3/);
  });

  it("counts across adapter processes (two gateways on one Redis share the budget), and the key expires", async () => {
    redis = createTestRedis("limit");
    const clock = () => Date.UTC(2025, 5, 3, 6, 7, 1);
    const a = createLimitedGateway({
      inner: createRecordingGateway(),
      redis: redis.redis,
      prefix: redis.prefix,
      perUserPerMinute: 2,
      now: clock,
    });
    const b = createLimitedGateway({
      inner: createRecordingGateway(),
      redis: redis.redis,
      prefix: redis.prefix,
      perUserPerMinute: 2,
      now: clock,
    });
    expect((await a.enqueue(message("3003"))).status).toBe("queued");
    expect((await b.enqueue(message("3003"))).status).toBe("queued");
    expect((await a.enqueue(message("3003"))).status).toBe("refused");
    const keys = await redis.redis.keys(`${redis.prefix}:ratelimit:*`);
    expect(keys).toHaveLength(1);
    const ttl = await redis.redis.ttl(keys[0]!);
    expect(ttl).toBeGreaterThan(60);
    expect(ttl).toBeLessThanOrEqual(120);
  });

  it("passes /reset and /stop through unlimited (they are how a user calms a runaway answer)", async () => {
    redis = createTestRedis("limit");
    const inner = createRecordingGateway();
    const gateway = createLimitedGateway({
      inner,
      redis: redis.redis,
      prefix: redis.prefix,
      perUserPerMinute: 1,
      now: () => 0,
    });
    await gateway.enqueue(message("4004"));
    expect((await gateway.enqueue(message("4004"))).status).toBe("refused");
    await gateway.reset("tg:4004");
    inner.stopResult = true;
    expect(await gateway.stop("tg:4004")).toBe(true);
    expect(inner.resets).toEqual(["tg:4004"]);
    expect(inner.stops).toEqual(["tg:4004"]);
  });
});
