/**
 * An operator writes one MCP file, sets MCP_CONFIG, and the bot uses the server's tools in
 * Telegram and Discord: the whole stack (bots + worker roles, real Redis, fake platforms and
 * model) with the real server-everything over stdio, and `npm run ask` as a real process.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect } from "vitest";
import { privateChat, type FakeUser } from "../../fakes/telegram-server.js";
import { textAnswer, toolCallAnswer } from "../../fakes/openai-server.js";
import { botAnswer } from "../../e2e/discord-harness.js";
import { e2eTest } from "../../support/fixtures.js";
import type { WorkerRole } from "../../../src/app/worker-role.js";
import { createToolListingStore } from "../../../src/queue/tool-listing-store.js";
import type { Stack } from "../../support/stack.js";
import { everythingEntry, waitFor } from "./mcp-kit.js";
import { runCli } from "../../support/run-cli.js";

const alice: FakeUser = { id: 4242, first_name: "Alice", language_code: "en" };

/** The file an operator would write. */
function mcpFile(): string {
  const path = join(mkdtempSync(join(tmpdir(), "mcp-chat-")), "mcp.json");
  writeFileSync(
    path,
    JSON.stringify({ mcpServers: { everything: everythingEntry({ tools: { include: ["echo", "get-sum"] } }) } }),
  );
  return path;
}

/** The worker connects in the background; the test waits until its health check says the server is up. */
async function mcpReady(worker: WorkerRole | undefined): Promise<void> {
  const check = worker?.healthChecks.find((c) => c.name === "mcp:everything");
  if (!check) throw new Error("the worker has no health check for the MCP server");
  let ok = false;
  await waitFor(
    () => {
      void check.check().then(
        () => (ok = true),
        () => undefined,
      );
      return ok;
    },
    15_000,
    "the MCP server to connect",
  );
}

/** The worker publishes its listing when the server becomes ready; the bots role reads it within a second. */
async function listingShowsReady(stack: Stack): Promise<void> {
  const store = createToolListingStore({ redis: stack.redis.redis, prefix: stack.config.KEY_PREFIX });
  let ready = false;
  await waitFor(
    () => {
      void store.read().then((l) => (ready = l?.groups.find((g) => g.source === "everything")?.state === "ready"));
      return ready;
    },
    5_000,
    "the published tool listing",
  );
  // Kept sleep: the bots role re-reads the listing once a second and exposes nothing that says it has.
  await new Promise((resolve) => setTimeout(resolve, 1_200));
}

describe("MCP tools in the chats", () => {
  e2eTest(
    "Telegram: the model calls everything__get-sum and the answer built on its result lands in the chat",
    async ({ startTelegram }) => {
      const telegram = await startTelegram({ env: { MCP_CONFIG: mcpFile() } });
      const { tg, model, stack } = telegram;
      await mcpReady(stack.worker);
      model.script([
        toolCallAnswer([{ name: "everything__get-sum", arguments: { a: 19, b: 23 }, id: "callSum" }]),
        textAnswer("19 + 23 = 42."),
      ]);

      tg.userSays(privateChat(alice), alice, "what is 19 + 23?");
      // What Alice sees: the tool line, then the answer.
      const answer = await tg.waitFor(() => tg.botMessages(alice.id).find((m) => m.text.endsWith("19 + 23 = 42.")), {
        timeoutMs: 10_000,
        what: "the answer",
      });
      expect(answer.text).toBe("✅ everything__get-sum(19, 23)\n\n19 + 23 = 42.");

      expect(model.requests[0]?.body.tools?.map((t) => t.function.name)).toEqual(
        expect.arrayContaining(["get_weather", "everything__echo", "everything__get-sum"]),
      );
      const toolMessage = model.requests[1]?.body.messages?.find((m) => m.role === "tool");
      expect(toolMessage).toMatchObject({ tool_call_id: "callSum", content: "The sum of 19 and 23 is 42." });

      // /tools lists what the bot has, grouped by source: the MCP server's tools beside the built-in ones.
      await listingShowsReady(stack);
      tg.userSays(privateChat(alice), alice, "/tools");
      const listing = await tg.waitFor(() => tg.botMessages(alice.id).find((m) => m.text.includes("Tools here")), {
        what: "the /tools answer",
      });
      expect(listing.text).toContain("built-in:\n✅ get_weather");
      expect(listing.text).toContain(
        "everything:\n✅ everything__echo: Echoes back the input string\n✅ everything__get-sum: Returns the sum of two numbers",
      );
    },
  );

  e2eTest("Discord: the same server's echo answers in a channel", async ({ startDiscord }) => {
    const discord = await startDiscord({ env: { MCP_CONFIG: mcpFile() } });
    const { discord: dc, model, stack } = discord;
    await mcpReady(stack.worker);
    model.script([
      toolCallAnswer([{ name: "everything__echo", arguments: { message: "ping" }, id: "callEcho" }]),
      textAnswer("The server said: Echo: ping"),
    ]);

    dc.userSays({ channelId: dc.ids.general, content: "echo ping", mentionsBot: true });
    const answer = await botAnswer(dc, dc.ids.general, (c) => c.endsWith("The server said: Echo: ping"), {
      timeoutMs: 10_000,
    });
    // Underscores escaped so Discord shows the name as written, not as underline markup.
    expect(answer.content).toBe("✅ everything\\_\\_echo(ping)\n\nThe server said: Echo: ping");
    expect(model.requests[1]?.body.messages?.find((m) => m.role === "tool")).toMatchObject({
      tool_call_id: "callEcho",
      content: "Echo: ping",
    });

    await listingShowsReady(stack);
    dc.userSays({ channelId: dc.ids.general, content: "/tools", mentionsBot: true });
    // Not botAnswer: the listing carries toggle buttons, which that helper reads as "still streaming".
    const listing = await dc.waitFor(
      () => dc.botMessages(dc.ids.general).find((m) => m.content.includes("Tools here")),
      { label: "the /tools answer" },
    );
    expect(listing.content).toMatch(/everything:\n✅ everything\\?_\\?_echo/);
  });

  e2eTest("npm run ask offers the same MCP tools and shows the call", async ({ model }) => {
    model.script([
      toolCallAnswer([{ name: "everything__echo", arguments: { message: "from ask" } }]),
      textAnswer("Done."),
    ]);
    const { code, stdout } = await runCli("src/ask.ts", ["echo from ask"], {
      env: { OPENAI_BASE_URL: model.url, MCP_CONFIG: mcpFile() },
    });
    expect(code).toBe(0);
    expect(stdout).toMatch(/✓ everything__echo \(\d+ ms\): Echo: from ask/);
    expect(stdout).toContain("Done.");
    expect(model.requests[0]?.body.tools?.map((t) => t.function.name)).toContain("everything__get-sum");
  });
});
