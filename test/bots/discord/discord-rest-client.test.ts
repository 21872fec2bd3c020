/**
 * The worker's Discord REST client (@discordjs/rest underneath) against a loopback server that stalls:
 * the call's own timer fires whether Discord never answers or stops mid-body, and the socket is closed.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, test } from "vitest";
import { createDiscordRestClient } from "../../../src/bots/discord/discord-rest-client.js";

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** A server that answers every request with `stall`; resolves its base URL and the requests' close events. */
async function stallingServer(stall: "headers" | "body"): Promise<{ apiBase: string; closed: Promise<void> }> {
  let closedResolve: () => void = () => {};
  const closed = new Promise<void>((resolve) => (closedResolve = resolve));
  server = createServer((req, res) => {
    req.on("close", () => res.writableEnded || closedResolve());
    res.on("close", () => closedResolve());
    if (stall === "body") {
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"id":"1", "content": "');
    }
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", () => resolve()));
  return { apiBase: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`, closed };
}

describe("every call has a timer that fires", () => {
  test.each(["headers", "body"] as const)(
    "a server that stalls before the %s: the call fails at the timeout",
    async (stall) => {
      const { apiBase, closed } = await stallingServer(stall);
      const rest = createDiscordRestClient({ token: "t", apiBase, timeoutMs: 300 });
      const started = performance.now();
      const error = await rest
        .request("POST", "/channels/123456/messages", { body: { content: "hi" } })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Error);
      expect((error as Error).name).toMatch(/TimeoutError|AbortError/);
      expect(performance.now() - started).toBeGreaterThanOrEqual(290);
      await closed;
    },
  );
});
