/** The node:http fetch of the model client and the platform clients, against real loopback servers. */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { gzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { createHttpTransport, nodeBodyOf } from "../../src/shared/http-transport.js";

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
  port: number;
}

interface TestServer {
  url: string;
  seen: Seen[];
  connections: number;
  closedSockets: number;
  close(): Promise<void>;
}

const servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** A loopback server that records each request and answers with `handle`. */
async function serve(handle: (req: IncomingMessage, res: ServerResponse, seen: Seen) => void): Promise<TestServer> {
  const sockets = new Set<Socket>();
  const state: TestServer = { url: "", seen: [], connections: 0, closedSockets: 0, close: async () => {} };
  const server: Server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (piece: string) => (body += piece));
    req.on("end", () => {
      const seen = {
        method: req.method ?? "",
        url: req.url ?? "",
        headers: req.headers,
        body,
        port: req.socket.remotePort ?? 0,
      };
      state.seen.push(seen);
      handle(req, res, seen);
    });
  });
  server.on("connection", (socket) => {
    state.connections++;
    sockets.add(socket);
    socket.on("close", () => {
      state.closedSockets++;
      sockets.delete(socket);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  servers.push(state);
  return state;
}

const json = (res: ServerResponse, status: number, value: unknown): void => {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(value));
};

describe("createHttpTransport", () => {
  it("sends the method, headers and body as given, and answers with status, headers and body", async () => {
    const server = await serve((_req, res, seen) => {
      res.setHeader("x-answer", "42");
      res.appendHeader("set-cookie", ["a=1", "b=2"]);
      json(res, 201, { echo: seen.body });
    });
    const transport = createHttpTransport();
    const response = await transport(`${server.url}/v1/chat/completions?x=1`, {
      method: "post",
      headers: new Headers({ Authorization: "Bearer sk-test", "Content-Type": "application/json" }),
      body: '{"model":"m","text":"héllo"}',
    });
    expect(server.seen[0]).toMatchObject({
      method: "POST",
      url: "/v1/chat/completions?x=1",
      body: '{"model":"m","text":"héllo"}',
    });
    expect(server.seen[0]?.headers).toMatchObject({
      authorization: "Bearer sk-test",
      "content-type": "application/json",
      "content-length": "29",
    });
    expect(response.status).toBe(201);
    expect(response.ok).toBe(true);
    expect(response.headers.get("x-answer")).toBe("42");
    expect(response.headers.getSetCookie()).toEqual(["a=1", "b=2"]);
    expect(await response.json()).toEqual({ echo: '{"model":"m","text":"héllo"}' });
  });

  it("sends a plain object's headers as Headers would take them", async () => {
    const server = await serve((_req, res) => res.end());
    const transport = createHttpTransport({ answers: "whole" });
    const headers = {
      Authorization: " Bot abc ",
      "X-Trace": "1",
      "x-trace": "2",
      constructor: "c",
      "Content-Type": "application/json",
    };
    await transport(server.url, { method: "POST", headers, body: "{}" });
    await fetch(server.url, { method: "POST", headers, body: "{}" });
    const [ours, theirs] = server.seen.map((s) => s.headers) as [
      IncomingMessage["headers"],
      IncomingMessage["headers"],
    ];
    for (const name of ["authorization", "x-trace", "constructor", "content-type", "content-length"])
      expect([name, ours[name]]).toEqual([name, theirs[name]]);
    expect(ours["x-trace"]).toBe("1, 2");
  });

  it("sends bytes and form bodies with the type fetch would give them", async () => {
    const server = await serve((_req, res) => res.end());
    const transport = createHttpTransport();
    await transport(server.url, { method: "PUT", body: new TextEncoder().encode("bytes") });
    await transport(server.url, { method: "POST", body: new URLSearchParams({ a: "1", b: "x y" }) });
    await transport(server.url, { method: "POST", body: "plain" });
    expect(server.seen.map((s) => [s.method, s.body, s.headers["content-type"]])).toEqual([
      ["PUT", "bytes", undefined],
      ["POST", "a=1&b=x+y", "application/x-www-form-urlencoded;charset=UTF-8"],
      ["POST", "plain", "text/plain;charset=UTF-8"],
    ]);
  });

  it("an error answer carries its real body", async () => {
    const server = await serve((_req, res) =>
      json(res, 400, {
        error: { code: 400, message: "exceeds the available context size", type: "exceed_context_size_error" },
      }),
    );
    const response = await createHttpTransport()(server.url, { method: "POST", body: "{}" });
    expect(response.status).toBe(400);
    expect(await response.text()).toContain("exceed_context_size_error");
  });

  it("the web body is read only when pulled: the Node body can be read instead", async () => {
    const server = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end("data: {}\n\n");
    });
    const response = await createHttpTransport()(server.url, { method: "POST" });
    const node = nodeBodyOf(response);
    if (!node) throw new Error("no Node body for the transport's own Response");
    let text = "";
    for await (const piece of node) text += String(piece);
    expect(text).toBe("data: {}\n\n");
    expect(response.bodyUsed).toBe(false);
    expect(nodeBodyOf(new Response("x"))).toBeUndefined();
  });

  it("decodes a gzip body, though it asks for none", async () => {
    const server = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip" });
      res.end(gzipSync(JSON.stringify({ ok: "décodé" })));
    });
    const response = await createHttpTransport()(server.url, {});
    expect(server.seen[0]?.headers["accept-encoding"]).toBeUndefined();
    expect(await response.json()).toEqual({ ok: "décodé" });
  });

  it("a 204 has no body", async () => {
    const server = await serve((_req, res) => {
      res.writeHead(204);
      res.end();
    });
    const response = await createHttpTransport()(server.url, { method: "DELETE" });
    expect(response.status).toBe(204);
    expect(response.body).toBeNull();
  });

  it("keeps connections alive: requests one after another share one", async () => {
    const server = await serve((_req, res) => json(res, 200, {}));
    const transport = createHttpTransport();
    for (let i = 0; i < 5; i++) await (await transport(server.url, { method: "POST", body: "{}" })).json();
    expect(server.seen).toHaveLength(5);
    expect(new Set(server.seen.map((s) => s.port)).size).toBe(1);
    expect(server.connections).toBe(1);
  });

  it("has no small socket cap: 60 streams held open at once each get their own connection", async () => {
    const held: ServerResponse[] = [];
    const server = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(": open\n\n");
      held.push(res);
      if (held.length === 60) for (const r of held) r.end("data: [DONE]\n\n");
    });
    const transport = createHttpTransport();
    const texts = await Promise.all(
      Array.from({ length: 60 }, async () => (await transport(server.url, { method: "POST" })).text()),
    );
    expect(texts.every((t) => t.endsWith("data: [DONE]\n\n"))).toBe(true);
    expect(server.connections).toBe(60);
  });

  it("closes idle pooled connections before a server's keep-alive timeout would", async () => {
    const server = await serve((_req, res) => json(res, 200, {}));
    const transport = createHttpTransport({ freeSocketTimeoutMs: 100 });
    await (await transport(server.url, {})).json();
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(server.closedSockets).toBe(1);
  });

  it("an abort before the headers rejects with the AbortError fetch gives", async () => {
    const server = await serve(() => {});
    const error = await createHttpTransport()(server.url, { method: "POST", signal: AbortSignal.timeout(50) }).catch(
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ name: "TimeoutError" });
    const stop = new AbortController();
    const pending = createHttpTransport()(server.url, { method: "POST", signal: stop.signal });
    setTimeout(() => stop.abort(), 20);
    expect(await pending.catch((e: unknown) => e)).toMatchObject({ name: "AbortError" });
    expect(await createHttpTransport()(server.url, { signal: stop.signal }).catch((e: unknown) => e)).toMatchObject({
      name: "AbortError",
    });
  });

  it("an abort after the headers breaks the body with an AbortError and closes the connection", async () => {
    const server = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("data: 1\n\n");
    });
    const stop = new AbortController();
    const response = await createHttpTransport()(server.url, { method: "POST", signal: stop.signal });
    const reader = response.body!.getReader();
    expect((await reader.read()).done).toBe(false);
    stop.abort();
    expect(await reader.read().catch((e: unknown) => e)).toMatchObject({ name: "AbortError" });
    await expect.poll(() => server.closedSockets).toBe(1);
  });

  it("a refused connection rejects like fetch: TypeError with the cause inside", async () => {
    const server = await serve(() => {});
    const url = server.url;
    await server.close();
    const error = await createHttpTransport()(url, {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TypeError);
    expect((error as TypeError).message).toBe("fetch failed");
    expect(((error as TypeError).cause as { code?: string }).code).toBe("ECONNREFUSED");
  });

  it("a body cut mid-way fails as fetch's `terminated`", async () => {
    const server = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"half":');
      setTimeout(() => res.socket?.destroy(), 20);
    });
    const response = await createHttpTransport()(server.url, {});
    const error = await response.text().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TypeError);
    expect((error as TypeError).message).toBe("terminated");
  });

  it("follows redirects as fetch does: 307 keeps method and body, 303 turns into GET, another origin gets no credentials", async () => {
    const other = await serve((_req, res, seen) =>
      json(res, 200, { at: "other", auth: seen.headers.authorization ?? null }),
    );
    const server = await serve((req, res, seen) => {
      if (req.url === "/307") res.writeHead(307, { location: "/final" }).end();
      else if (req.url === "/303") res.writeHead(303, { location: "/final" }).end();
      else if (req.url === "/away") res.writeHead(308, { location: `${other.url}/there` }).end();
      else json(res, 200, { method: seen.method, body: seen.body, auth: seen.headers.authorization ?? null });
    });
    const transport = createHttpTransport();
    const init = { method: "POST", headers: { authorization: "Bearer sk" }, body: "{}" };
    expect(await (await transport(`${server.url}/307`, init)).json()).toEqual({
      method: "POST",
      body: "{}",
      auth: "Bearer sk",
    });
    expect(await (await transport(`${server.url}/303`, init)).json()).toEqual({
      method: "GET",
      body: "",
      auth: "Bearer sk",
    });
    expect(await (await transport(`${server.url}/away`, init)).json()).toEqual({ at: "other", auth: null });
    const manual = await transport(`${server.url}/307`, { ...init, redirect: "manual" });
    expect([manual.status, manual.headers.get("location")]).toEqual([307, "/final"]);
    expect(
      await transport(`${server.url}/307`, { ...init, redirect: "error" }).catch((e: unknown) => e),
    ).toBeInstanceOf(TypeError);
  });
});

describe("createHttpTransport with answers read whole", () => {
  const whole = (opts: { redirect?: "error" } = {}) => createHttpTransport({ answers: "whole", ...opts });

  it("answers like the streamed Response: status, headers, text and JSON (more than once), bytes, no web body", async () => {
    const server = await serve((_req, res) => {
      res.setHeader("x-ratelimit-remaining", "4");
      res.appendHeader("set-cookie", ["a=1", "b=2"]);
      res.writeHead(201, "Made", { "content-type": "application/json" });
      res.end(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"text":"héllo"}')]));
    });
    const response = await whole()(server.url, { method: "POST", body: "{}" });
    expect([response.status, response.ok, response.statusText]).toEqual([201, true, "Made"]);
    expect(response.headers.get("x-ratelimit-remaining")).toBe("4");
    expect(response.headers.getSetCookie()).toEqual(["a=1", "b=2"]);
    expect(await response.text()).toBe('{"text":"héllo"}');
    expect(await response.json()).toEqual({ text: "héllo" });
    expect(
      Buffer.from(await response.arrayBuffer())
        .subarray(3)
        .toString(),
    ).toBe('{"text":"héllo"}');
    expect(response.body).toBeNull();

    const missing = await serve((_req, res) => json(res, 404, { ok: false }));
    const notFound = await whole()(missing.url, {});
    expect([notFound.ok, notFound.status, await notFound.json()]).toEqual([false, 404, { ok: false }]);
  });

  it("decodes gzip, gives a 204 an empty body, and keeps one connection for calls one after another", async () => {
    const server = await serve((req, res) => {
      if (req.method === "DELETE") {
        res.writeHead(204);
        res.end();
        return;
      }
      res.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip" });
      res.end(gzipSync(JSON.stringify({ ok: "décodé" })));
    });
    const transport = whole();
    expect(await (await transport(server.url, {})).json()).toEqual({ ok: "décodé" });
    const gone = await transport(server.url, { method: "DELETE" });
    expect([gone.status, await gone.text()]).toEqual([204, ""]);
    expect(await (await transport(server.url, {})).json()).toEqual({ ok: "décodé" });
    expect(server.connections).toBe(1);
  });

  it("a body cut mid-way rejects the fetch with `terminated`; an abort mid-body rejects with an AbortError and closes the connection", async () => {
    const server = await serve((req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"half":');
      if (req.url === "/cut") setTimeout(() => res.socket?.destroy(), 20);
    });
    const cut = await whole()(`${server.url}/cut`, {}).catch((e: unknown) => e);
    expect(cut).toBeInstanceOf(TypeError);
    expect((cut as TypeError).message).toBe("terminated");

    const stop = new AbortController();
    const pending = whole()(`${server.url}/held`, { signal: stop.signal });
    await expect.poll(() => server.seen.length).toBe(2);
    stop.abort();
    expect(await pending.catch((e: unknown) => e)).toMatchObject({ name: "AbortError" });
    await expect.poll(() => server.closedSockets).toBe(2);
  });

  it("with redirect 'error' a redirect is refused unless the request asks to follow it", async () => {
    const server = await serve((req, res) => {
      if (req.url === "/moved") res.writeHead(302, { location: "http://169.254.169.254/latest" }).end();
      else if (req.url === "/here") res.writeHead(307, { location: "/final" }).end();
      else json(res, 200, { at: req.url });
    });
    const refused = await whole({ redirect: "error" })(`${server.url}/moved`, {}).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(TypeError);
    expect(((refused as TypeError).cause as Error).message).toBe("redirect to http://169.254.169.254/latest refused");
    expect(await (await whole({ redirect: "error" })(`${server.url}/here`, { redirect: "follow" })).json()).toEqual({
      at: "/final",
    });
    expect(server.seen.map((s) => s.url)).toEqual(["/moved", "/here", "/final"]);
  });
});
