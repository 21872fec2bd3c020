/**
 * What an operator's probes see from a real `src/main.ts` process while its dependencies
 * come and go: /healthz is 200 with Redis and the model answering, 503 naming Redis while
 * Redis is gone (and 200 again once it is back), 503 naming the model when its server is
 * down; /metrics keeps answering throughout.
 */
import { describe, expect } from "vitest";
import { textAnswer } from "../fakes/openai-server.js";
import { freePort } from "../support/free-port.js";
import { e2eTest } from "../support/fixtures.js";
import { healthz, scrape, waitFor } from "./support/ops-http.js";
import { hasSeries, valueOf } from "./support/prometheus-text.js";

describe("/healthz and /metrics of a running bot process", () => {
  e2eTest(
    "names whichever dependency is down, recovers with it, and keeps serving metrics",
    async ({ privateRedis, fakeModel, spawnRole }) => {
      // A Redis of this test's own, so taking it away disturbs no other suite.
      const redis = await privateRedis();
      const model = await fakeModel(() => textAnswer("unused"));
      const port = await freePort();
      const _role = await spawnRole("all", {
        REDIS_URL: redis.url,
        KEY_PREFIX: "ops",
        HTTP_PORT: String(port),
        OPENAI_BASE_URL: model.url,
      });
      const ops = `http://127.0.0.1:${port}`;

      expect(await healthz(ops)).toEqual({ status: 200, body: { status: "ok", checks: { redis: "ok", model: "ok" } } });
      // main.ts serves the bot's series and the process's own (CPU, memory) on the same port.
      const healthy = await scrape(ops);
      expect(valueOf(healthy, "chatbot_queue_depth", { state: "unanswered" })).toBe(0);
      expect(hasSeries(healthy, "chatbot_active_conversations")).toBe(true);
      expect(hasSeries(healthy, "process_cpu_seconds_total")).toBe(true);

      // Redis goes away.
      await redis.stop("SIGKILL");
      const noRedis = await healthz(ops);
      expect(noRedis.status).toBe(503);
      expect(noRedis.body.status).toBe("unhealthy");
      expect(noRedis.body.checks.model).toBe("ok");
      expect(noRedis.body.checks.redis).toBe("unavailable");
      // The depth cannot be read: a scrape still answers at once, without the depth and with the miss counted.
      const started = Date.now();
      const blind = await scrape(ops);
      expect(Date.now() - started).toBeLessThan(3000);
      expect(hasSeries(blind, "chatbot_queue_depth")).toBe(false);
      expect(valueOf(blind, "chatbot_queue_depth_read_errors_total")).toBeGreaterThanOrEqual(1);
      expect(hasSeries(blind, "process_resident_memory_bytes")).toBe(true);

      // Redis comes back on the same address: healthy again, without a restart.
      await redis.start();
      await waitFor("/healthz to recover", async () => (await healthz(ops)).status === 200, 10_000);
      expect(hasSeries(await scrape(ops), "chatbot_queue_depth", { state: "unanswered" })).toBe(true);

      // The model server goes away.
      await model.close();
      const noModel = await healthz(ops);
      expect(noModel.status).toBe(503);
      expect(noModel.body.checks.redis).toBe("ok");
      expect(noModel.body.checks.model).toBe("unavailable");
    },
  );
});
