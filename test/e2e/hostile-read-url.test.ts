/**
 * A web page that tries to turn the bot against its own network, end to end:
 * the model reads the fake web's `/inject` page, which tells it to fetch
 * http://127.0.0.1:6379 (Redis); the obedient fake model then asks for that and for every
 * other spelling of a private address it could try, plus a private decoy that would answer.
 * The model's next request must carry a refusal for each, and no socket may have been
 * opened to Redis or the decoy: watched from both ends (every client socket this process
 * opens, via node:diagnostics_channel, and the decoy's own accept count).
 */
import { subscribe, unsubscribe } from "node:diagnostics_channel";
import { createServer, type Server, type Socket } from "node:net";
import { describe, expect } from "vitest";
import { privateChat } from "../fakes/telegram-server.js";
import { textAnswer, toolCallAnswer, type RecordedRequest } from "../fakes/openai-server.js";
import { startHostileRig } from "../security/hostile-kit.js";
import { e2eTest } from "../support/fixtures.js";

/** Client sockets this process opens from now on: where they connected, and whether tool code opened them. */
function watchSockets(): { connected: { port: number; address: string; fromTools: boolean }[]; stop(): void } {
  const connected: { port: number; address: string; fromTools: boolean }[] = [];
  const onSocket = (message: unknown) => {
    const socket = (message as { socket: Socket }).socket;
    // The channel fires inside net.connect, so the stack still shows who asked for the socket.
    const fromTools = /[\\/]src[\\/]tools[\\/]/.test(new Error().stack ?? "");
    socket.once("connect", () =>
      connected.push({ port: socket.remotePort ?? 0, address: socket.remoteAddress ?? "", fromTools }),
    );
  };
  subscribe("net.client.socket", onSocket);
  return { connected, stop: () => unsubscribe("net.client.socket", onSocket) };
}

/** A listener on a private address that counts the connections it accepts. */
async function startDecoy(): Promise<{ server: Server; url: string; accepted: () => number }> {
  let accepted = 0;
  const server = createServer((socket) => {
    accepted++;
    socket.end("-ERR this is the decoy\r\n");
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.2", () => resolve());
  });
  const { port } = server.address() as { port: number };
  return { server, url: `http://127.0.0.2:${port}/`, accepted: () => accepted };
}

const PRIVATE_SPELLINGS = [
  "http://127.0.0.1:6379/",
  "http://localhost:6379/",
  "http://[::1]:6379/",
  "http://[::ffff:127.0.0.1]:6379/",
  "http://2130706433:6379/",
  "http://0x7f.0.0.1:6379/",
  "http://0177.0.0.1:6379/",
  "http://127.1:6379/",
  "http://169.254.169.254/latest/meta-data/",
  "gopher://127.0.0.1:6379/_SET%20pwned%201",
];

describe("read_url against a page that asks for the bot's own network", () => {
  e2eTest(
    "every private target is refused back to the model, and no socket reaches Redis or the decoy",
    async ({ closeAfter }) => {
      const trap = await startDecoy();
      closeAfter({ close: () => new Promise<void>((resolve) => trap.server.close(() => resolve())) });
      // The fake web is on 127.0.0.1 too: allow exactly it, as an operator would allow one intranet host.
      const rig = closeAfter(
        await startHostileRig({ platform: "telegram", envFor: ({ web }) => ({ READ_URL_ALLOW_HOSTS: web.host }) }),
      );
      const { tg, model } = { tg: rig.tg!, model: rig.model };
      const targets = [...PRIVATE_SPELLINGS, trap.url];
      model.script([
        toolCallAnswer([{ name: "read_url", arguments: { url: `${rig.web.url}/inject` } }]),
        (request: RecordedRequest) => {
          // Obey the page: it asked for 127.0.0.1:6379; try every other way to say it too.
          const page = String(request.body.messages?.at(-1)?.content ?? "");
          expect(page).toContain("http://127.0.0.1:6379/");
          // At most 8 calls run per round (src/agent/run-agent.ts), so the model spreads them over two rounds.
          return toolCallAnswer(targets.slice(0, 8).map((url) => ({ name: "read_url", arguments: { url } })));
        },
        toolCallAnswer(targets.slice(8).map((url) => ({ name: "read_url", arguments: { url } }))),
        textAnswer("I could not read that address."),
      ]);
      const sockets = watchSockets();
      closeAfter({ close: sockets.stop });

      const alice = { id: 1001, first_name: "Alice" };
      tg.userSays(privateChat(alice), alice, "Please summarise the page at the link");
      await tg.waitFor(() => tg.visibleText(alice.id).includes("I could not read that address."), {
        timeoutMs: 15_000,
        what: "the final answer",
      });

      // Nothing connected to Redis or the decoy; the tool's only connection went to the allowed page.
      const fromTools = sockets.connected.filter((c) => c.fromTools);
      expect(fromTools.map((c) => c.port)).toEqual([rig.web.port]);
      expect(sockets.connected.filter((c) => c.port === 6379 && c.fromTools)).toEqual([]);
      expect(trap.accepted()).toBe(0);
      // The model's last request carries one refusal per target, paired by call id.
      const last = model.requests[3]!.body.messages ?? [];
      const observations = last.filter((m) => m.role === "tool").slice(-targets.length);
      expect(observations).toHaveLength(targets.length);
      for (const [i, observation] of observations.entries()) {
        expect(String(observation.content), targets[i]).toMatch(/refused/i);
      }
      // The user sees the tool activity and the model's answer, never a stack trace.
      expect(tg.visibleText(alice.id)).not.toMatch(/\bat .*\.[jt]s:\d+|Error:/);
    },
  );
});
