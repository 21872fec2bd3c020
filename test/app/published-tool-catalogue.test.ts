/** The bots role's /tools catalogue follows what the workers publish in Redis, and lists the built-ins until then. */
import { afterEach, describe, expect, it } from "vitest";
import { createPublishedToolCatalogue } from "../../src/app/published-tool-catalogue.js";
import { createToolListingStore } from "../../src/queue/tool-listing-store.js";
import { builtinToolCatalogue } from "../../src/tools/tool-catalogue.js";
import { createTools } from "../../src/tools/index.js";
import { createTestRedis, type TestRedis } from "../support/redis.js";

let redis: TestRedis | undefined;
afterEach(async () => {
  await redis?.cleanup();
  redis = undefined;
});

describe("the published tool catalogue", () => {
  it("starts with the built-in tools, shows the workers' listing (MCP servers included), and falls back when it expires", async () => {
    redis = createTestRedis("tool-listing");
    const store = createToolListingStore({ redis: redis.redis, prefix: redis.prefix });
    const fallback = builtinToolCatalogue(
      createTools({
        weatherApiBase: "http://127.0.0.1:9",
        newsRssUrl: "http://127.0.0.1:9/?q={query}",
        allowHosts: [],
      }),
    );
    const published = createPublishedToolCatalogue({ store, fallback, refreshMs: 60_000 });
    try {
      await published.refresh();
      expect(published.catalogue().map((g) => g.source)).toEqual(["built-in"]);

      await store.publish(
        {
          updatedAt: Date.now(),
          groups: [
            { source: "built-in", tools: [{ name: "get_time", description: "time" }] },
            {
              source: "everything",
              state: "ready",
              tools: [{ name: "everything__echo", description: "Echoes back the input string" }],
            },
          ],
        },
        60,
      );
      await published.refresh();
      expect(published.catalogue()[1]).toEqual({
        source: "everything",
        state: "ready",
        tools: [{ name: "everything__echo", description: "Echoes back the input string" }],
      });

      // No worker refreshed it: the key expires and /tools falls back to what every process knows.
      await redis.redis.del(`${redis.prefix}:tools`);
      await published.refresh();
      expect(published.catalogue().map((g) => g.source)).toEqual(["built-in"]);
    } finally {
      published.close();
    }
  });
});
