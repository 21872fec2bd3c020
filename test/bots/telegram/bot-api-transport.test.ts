/**
 * The worker's Bot API transport (shared/http-transport.ts, answers read whole, no redirects) under
 * the real grammY Api: answers and Bot API errors as grammY reports
 * them with its default fetch (against the fake Bot API), and at the HTTP level (a plain loopback
 * server): a streamed multipart upload arriving whole as node-fetch sends it, one kept-alive socket
 * for consecutive calls, an abort or grammY's timeout closing the request, a redirect refused, a
 * dropped connection and a gzip body.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { Api, GrammyError, HttpError, InputFile } from "grammy";
import { privateChat, startFakeTelegram, type FakeTelegram } from "../../fakes/telegram-server.js";
import { createHttpTransport } from "../../../src/shared/http-transport.js";

/** The transport as the worker builds it for the platforms. */
const platformTransport = () => createHttpTransport({ answers: "whole", redirect: "error" });

const alice = { id: 1001, first_name: "Alice" };
const TOKEN = "123456:test-token";

let fake: FakeTelegram | undefined;
let plain: Server | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
  plain?.closeAllConnections();
  await new Promise<void>((resolve) => (plain ? plain.close(() => resolve()) : resolve()));
  plain = undefined;
});

/** A plain HTTP server on loopback; counts the sockets it was opened. */
async function startPlain(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ apiRoot: string; sockets: () => number }> {
  let sockets = 0;
  plain = createServer(handler);
  plain.on("connection", () => sockets++);
  await new Promise<void>((resolve) => plain!.listen(0, "127.0.0.1", () => resolve()));
  return { apiRoot: `http://127.0.0.1:${(plain.address() as AddressInfo).port}`, sockets: () => sockets };
}

const failureOf = (p: Promise<unknown>): Promise<unknown> =>
  p.then(
    () => undefined,
    (e: unknown) => e,
  );

describe("Bot API transport", () => {
  it("answers and fails under grammY as its default fetch does", async () => {
    let clock = 1_700_000_000_000;
    fake = await startFakeTelegram({ now: () => (clock += 5_000) });
    const chat = privateChat(alice);
    fake.userSays(chat, alice, "hi");
    const lean = new Api(fake.token, { apiRoot: fake.apiRoot, fetch: platformTransport() });
    const stock = new Api(fake.token, { apiRoot: fake.apiRoot });

    const sent = await lean.sendMessage(chat.id, "<b>Hello</b>, Alice", { parse_mode: "HTML" });
    await lean.editMessageText(chat.id, sent.message_id, "Hello again");
    expect(fake.visibleText(chat.id)).toBe("Hello again");

    // A Bot API error: the same GrammyError, description and code from either fetch.
    for (const api of [lean, stock]) {
      const missing = await failureOf(api.editMessageText(chat.id, 999_999, "x"));
      expect(missing).toBeInstanceOf(GrammyError);
      expect((missing as GrammyError).error_code).toBe(400);
      expect((missing as GrammyError).description).toBe("Bad Request: message to edit not found");
    }
    // 429 carries retry_after.
    fake.failNext("sendMessage", 1, { retryAfter: 7 });
    const limited = await failureOf(lean.sendMessage(chat.id, "x"));
    expect(limited).toBeInstanceOf(GrammyError);
    expect((limited as GrammyError).parameters.retry_after).toBe(7);
    // nginx's HTML 502 and a destroyed connection are HttpErrors, as with node-fetch.
    for (const failure of [{ status: 502 as const, html: true }, { networkError: true as const }]) {
      for (const api of [lean, stock]) {
        fake.failNext("sendMessage", 1, failure);
        const error = await failureOf(api.sendMessage(chat.id, "x"));
        expect(error).toBeInstanceOf(HttpError);
        expect((error as HttpError).message).toBe("Network request for 'sendMessage' failed!");
      }
    }
    expect(fake.botMessages(chat.id).map((m) => m.text)).toEqual(["Hello again"]);
  });

  it("streams a multipart upload whole", async () => {
    const bodies: Buffer[] = [];
    const server = await startPlain((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        bodies.push(Buffer.concat(chunks));
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ ok: true, result: { message_id: bodies.length } }));
      });
    });
    const bytes = Buffer.alloc(300_000, "abc");
    const send = (api: Api) => api.sendDocument(1, new InputFile(bytes, "notes.txt"), { caption: "your notes" });
    await send(new Api(TOKEN, { apiRoot: server.apiRoot }));
    expect(await send(new Api(TOKEN, { apiRoot: server.apiRoot, fetch: platformTransport() }))).toEqual({
      message_id: 2,
    });
    const [stock, lean] = bodies as [Buffer, Buffer];
    // The same form as node-fetch sends (boundary and attach id are random, of fixed length), with the file whole.
    expect(lean.length).toBe(stock.length);
    expect(lean.indexOf(bytes)).toBeGreaterThan(0);
    expect(lean.toString("latin1")).toContain('name="caption"\r\n\r\nyour notes\r\n');
    expect(lean.toString("latin1")).toContain(";filename=notes.txt\r\n");
  });

  it("keeps one socket for consecutive calls and closes the request on abort or grammY's timeout", async () => {
    const held: IncomingMessage[] = [];
    const closed: string[] = [];
    const server = await startPlain((req, res) => {
      if (req.url?.endsWith("/getMe")) {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ ok: true, result: { id: 1, is_bot: true, first_name: "Bot" } }));
        return;
      }
      held.push(req); // never answered
      res.on("close", () => closed.push(req.url ?? ""));
    });
    const api = new Api(TOKEN, { apiRoot: server.apiRoot, fetch: platformTransport(), timeoutSeconds: 1 });
    for (let i = 0; i < 3; i++) expect((await api.getMe()).first_name).toBe("Bot");
    expect(server.sockets()).toBe(1);

    const controller = new AbortController();
    const aborted = failureOf(api.sendMessage(1, "x", {}, grammySignal(controller.signal)));
    await expect.poll(() => held.length).toBe(1);
    controller.abort();
    const abortError = await aborted;
    expect(abortError).toBeInstanceOf(HttpError);
    expect(((abortError as HttpError).error as Error).name).toBe("AbortError");
    await expect.poll(() => closed.length).toBe(1);

    const timedOut = await failureOf(api.sendChatAction(1, "typing"));
    expect(timedOut).toBeInstanceOf(HttpError);
    expect(((timedOut as HttpError).error as Error).message).toBe(
      "Request to 'sendChatAction' timed out after 1 seconds",
    );
    await expect.poll(() => closed.length).toBe(2);
    expect(closed.map((url) => url.split("/").pop())).toEqual(["sendMessage", "sendChatAction"]);

    // A signal aborted before the call sends nothing.
    const before = held.length;
    const early = await failureOf(api.sendMessage(1, "x", {}, grammySignal(AbortSignal.abort())));
    expect(((early as HttpError).error as Error).name).toBe("AbortError");
    expect(held.length).toBe(before);
  });

  it("refuses a redirect, reports a connection dropped mid-answer, and inflates a gzip body", async () => {
    const server = await startPlain((req, res) => {
      const method = req.url?.split("/").pop();
      if (method === "getMe") {
        res.writeHead(302, { location: "http://169.254.169.254/latest/meta-data" });
        res.end();
      } else if (method === "getChat") {
        res.writeHead(200, { "content-type": "application/json", "content-length": "1000" });
        res.write('{"ok":true,"result":{"id":');
        setTimeout(() => res.destroy(), 20);
      } else {
        res.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip" });
        res.end(gzipSync(JSON.stringify({ ok: true, result: { id: 5, type: "private", first_name: "Zed" } })));
      }
    });
    const api = new Api(TOKEN, { apiRoot: server.apiRoot, fetch: platformTransport() });
    const redirected = await failureOf(api.getMe());
    expect(redirected).toBeInstanceOf(HttpError);
    expect(((redirected as HttpError).error as Error).message).toBe("fetch failed");
    expect((((redirected as HttpError).error as Error).cause as Error).message).toBe(
      "redirect to http://169.254.169.254/latest/meta-data refused",
    );
    const dropped = await failureOf(api.getChat(5));
    expect(dropped).toBeInstanceOf(HttpError);
    expect((dropped as HttpError).message).toBe("Network request for 'getChat' failed!");
    expect(await api.getChatMember(5, 5)).toEqual({ id: 5, type: "private", first_name: "Zed" });
  });
});

/** grammY types signals with its abort-controller polyfill; at runtime the standard one is what it takes. */
const grammySignal = (signal: AbortSignal) => signal as unknown as Parameters<Api["sendMessage"]>[3];
