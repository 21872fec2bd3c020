import net from "node:net";
import tls from "node:tls";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { ResolvedAddress, ResolveHost } from "../../src/tools/dns-resolve.js";
import { createSafeFetch, SafeFetchError } from "../../src/tools/safe-fetch.js";
import { startFakeWeb, type FakeWeb } from "../fakes/web-server.js";

const v4 = (address: string): ResolvedAddress => ({ address, family: 4 });
const v6 = (address: string): ResolvedAddress => ({ address, family: 6 });

/** A resolver from a fixed table; unknown names fail the way getaddrinfo does. */
function tableResolver(table: Record<string, ResolvedAddress[]>) {
  return vi.fn<ResolveHost>(async (host) => {
    const hit = table[host];
    if (!hit) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
    return hit;
  });
}

async function failure(p: Promise<unknown>): Promise<SafeFetchError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SafeFetchError);
  const e = err as SafeFetchError;
  // Messages are for the model: one short line, no stack trace.
  expect(e.message).not.toMatch(/\n|\bat .+:\d+:\d+/);
  expect(e.message.length).toBeLessThan(300);
  return e;
}

let web: FakeWeb;
beforeAll(async () => {
  web = await startFakeWeb();
});
afterAll(async () => {
  await web.close();
});
afterEach(() => {
  web.requests.length = 0;
  web.setDelay("*", 0);
});

describe("hostile URLs are refused before any byte is sent", () => {
  const P = () => web.port;
  const cases: [string, () => string, RegExp][] = [
    ["loopback", () => `http://127.0.0.1:${P()}/`, /127\.0\.0\.1 is a loopback address/],
    ["decimal IPv4", () => `http://2130706433:${P()}/`, /127\.0\.0\.1 is a loopback/],
    ["hex IPv4", () => `http://0x7f.1:${P()}/`, /127\.0\.0\.1 is a loopback/],
    ["hex dword", () => `http://0x7f000001:${P()}/`, /127\.0\.0\.1 is a loopback/],
    ["octal dword", () => `http://017700000001:${P()}/`, /127\.0\.0\.1 is a loopback/],
    ["octal dotted", () => `http://0177.0.0.1:${P()}/`, /127\.0\.0\.1 is a loopback/],
    ["short form", () => `http://127.1:${P()}/`, /127\.0\.0\.1 is a loopback/],
    ["full-width digits", () => `http://１２７.０.０.１:${P()}/`, /127\.0\.0\.1 is a loopback/],
    ["upper-case scheme", () => `HTTP://127.0.0.1:${P()}/`, /loopback/],
    ["userinfo trick", () => `http://example.com@127.0.0.1:${P()}/`, /127\.0\.0\.1 is a loopback/],
    ["IPv6 loopback", () => `http://[::1]:${P()}/`, /::1 is a loopback/],
    ["IPv6 unspecified", () => `http://[::]:${P()}/`, /unspecified/],
    ["IPv4-mapped", () => `http://[::ffff:127.0.0.1]:${P()}/`, /carries 127\.0\.0\.1, which is a loopback/],
    ["IPv4-mapped long form", () => `http://[0:0:0:0:0:ffff:7f00:1]:${P()}/`, /carries 127\.0\.0\.1/],
    ["IPv4-compatible", () => `http://[::127.0.0.1]:${P()}/`, /carries 127\.0\.0\.1/],
    ["NAT64", () => `http://[64:ff9b::7f00:1]:${P()}/`, /carries 127\.0\.0\.1/],
    ["6to4", () => `http://[2002:7f00:1::1]:${P()}/`, /carries 127\.0\.0\.1/],
    ["0.0.0.0", () => `http://0.0.0.0:${P()}/`, /unspecified/],
    ["bare 0", () => `http://0:${P()}/`, /0\.0\.0\.0 is an unspecified/],
    ["localhost", () => `http://localhost:${P()}/`, /localhost is a loopback name/],
    ["localhost with dot", () => `http://LOCALHOST.:${P()}/`, /loopback name/],
    [
      "AWS metadata",
      () => "http://169.254.169.254/latest/meta-data/iam/",
      /169\.254\.169\.254 is a cloud metadata address/,
    ],
    ["AWS IPv6 metadata", () => "http://[fd00:ec2::254]/latest/meta-data/", /metadata/],
    ["GCP metadata", () => "http://metadata.google.internal/computeMetadata/v1/", /cloud metadata host/],
    ["private 10/8", () => "http://10.0.0.1/", /private/],
    ["private 192.168/16", () => "http://192.168.1.1/admin", /private/],
    ["private 172.16/12", () => "http://172.20.0.1/", /private/],
    ["CGNAT", () => "http://100.64.0.1/", /carrier-grade NAT/],
    ["link-local", () => "http://169.254.10.10/", /link-local/],
    ["IPv6 link-local", () => "http://[fe80::1]/", /link-local/],
    ["IPv6 ULA", () => "http://[fc00::1]/", /private/],
    ["multicast", () => "http://224.0.0.1/", /multicast/],
    ["file scheme", () => "file:///etc/passwd", /only http and https/],
    ["gopher to redis", () => "gopher://127.0.0.1:6379/_INFO", /only http and https/],
    ["dict scheme", () => "dict://127.0.0.1:6379/info", /only http and https/],
    ["ftp scheme", () => "ftp://example.com/file", /only http and https/],
    ["data URL", () => "data:text/html,<h1>hi</h1>", /only http and https/],
    ["javascript URL", () => "javascript:alert(1)", /only http and https/],
    ["websocket", () => "ws://example.com/", /only http and https/],
  ];

  it.each(cases)("%s", async (_name, url, why) => {
    const lookup = tableResolver({});
    const safeFetch = createSafeFetch({ lookup, timeoutMs: 2_000 });
    const err = await failure(safeFetch(url()));
    expect(err.code).toBe("refused");
    expect(err.message).toMatch(/^refused: /);
    expect(err.message).toMatch(why);
    // Literal addresses and refused schemes never reach DNS, and nothing reaches the server.
    expect(lookup).not.toHaveBeenCalled();
    expect(web.requests).toHaveLength(0);
  });

  it("refuses names that resolve to private addresses, checking every address returned", async () => {
    const lookup = tableResolver({
      "internal.test": [v4("127.0.0.1")],
      "mixed.test": [v4("93.184.216.34"), v4("10.0.0.7")],
      "v6only.test": [v6("::1")],
      "mapped.test": [v6("::ffff:127.0.0.1")],
      "nip.test": [v4("169.254.169.254")],
    });
    const safeFetch = createSafeFetch({ lookup, timeoutMs: 2_000 });
    const expectations: [string, RegExp][] = [
      [
        `http://internal.test:${web.port}/`,
        /internal\.test resolves to a blocked address \(127\.0\.0\.1 is a loopback address\)/,
      ],
      [
        `http://mixed.test:${web.port}/`,
        /mixed\.test resolves to a blocked address \(10\.0\.0\.7 is a private address\)/,
      ],
      [`http://v6only.test:${web.port}/`, /::1 is a loopback/],
      [`http://mapped.test:${web.port}/`, /carries 127\.0\.0\.1/],
      ["http://nip.test/", /cloud metadata/],
    ];
    for (const [url, why] of expectations) {
      const err = await failure(safeFetch(url));
      expect(err.code).toBe("refused");
      expect(err.message).toMatch(why);
    }
    expect(web.requests).toHaveLength(0);
  });

  it("says clearly when a name does not resolve", async () => {
    const safeFetch = createSafeFetch({ lookup: tableResolver({}), timeoutMs: 2_000 });
    const err = await failure(safeFetch("http://nosuch.test/"));
    expect(err.code).toBe("dns");
    expect(err.message).toBe("could not resolve host nosuch.test (host not found)");
  });

  it("rejects text that is not a URL", async () => {
    const safeFetch = createSafeFetch({ timeoutMs: 2_000 });
    const err = await failure(safeFetch("http://[::1"));
    expect(err.code).toBe("invalid-url");
  });
});

describe("redirects are followed by hand and every hop is checked", () => {
  it("refuses a redirect to a private address after the first (allowed) hop", async () => {
    const safeFetch = createSafeFetch({ allowHosts: [web.host], timeoutMs: 2_000 });
    const err = await failure(safeFetch(`${web.url}/redirect?to=${encodeURIComponent("http://127.0.0.1:6379/")}`));
    expect(err.code).toBe("refused");
    expect(err.message).toBe("refused: 127.0.0.1 is a loopback address (redirect to http://127.0.0.1:6379/)");
    expect(web.requests.map((r) => r.pathname)).toEqual(["/redirect"]);
  });

  it("checks the redirect target's own host:port, not the first one's", async () => {
    const lookup = tableResolver({ "internal.test": [v4("127.0.0.1")] });
    const safeFetch = createSafeFetch({ allowHosts: [web.host], lookup, timeoutMs: 2_000 });
    for (const to of [
      `http://[::1]:${web.port}/article/1`,
      `http://internal.test:${web.port}/article/1`,
      `http://0x7f.1:${web.port + 1}/`,
      "file:///etc/passwd",
    ]) {
      const err = await failure(safeFetch(`${web.url}/redirect?status=307&to=${encodeURIComponent(to)}`));
      expect(err.code).toBe("refused");
      expect(err.message).toMatch(/redirect to/);
    }
    expect(web.requests.every((r) => r.pathname === "/redirect")).toBe(true);
  });

  it("follows relative redirects of every kind to the final URL", async () => {
    const safeFetch = createSafeFetch({ allowHosts: [web.host], timeoutMs: 2_000 });
    for (const status of [301, 302, 303, 307, 308]) {
      const res = await safeFetch(`${web.url}/redirect?status=${status}&to=${encodeURIComponent("/article/2?x=1")}`);
      expect(res.status).toBe(200);
      expect(res.url).toBe(`${web.url}/article/2?x=1`);
      expect(res.body.toString("utf8")).toContain("Regulators published a draft");
    }
  });

  it("stops after 5 redirects", async () => {
    const safeFetch = createSafeFetch({ allowHosts: [web.host], timeoutMs: 2_000 });
    const err = await failure(safeFetch(`${web.url}/redirect-loop`));
    expect(err.message).toBe("refused: more than 5 redirects");
    expect(web.requests).toHaveLength(6);
  });
});

describe("allowHosts", () => {
  it("lets exactly the listed host:port through, not the same host on another port", async () => {
    const other = await startFakeWeb();
    try {
      const safeFetch = createSafeFetch({ allowHosts: [web.host], timeoutMs: 2_000 });
      expect((await safeFetch(`${web.url}/text`)).status).toBe(200);
      const err = await failure(safeFetch(`${other.url}/text`));
      expect(err.message).toBe("refused: 127.0.0.1 is a loopback address");
      expect(other.requests).toHaveLength(0);
    } finally {
      await other.close();
    }
  });

  it("matches by the name in the URL (case-insensitive), not by the address it resolves to", async () => {
    const lookup = tableResolver({ "web.test": [v4("127.0.0.1")], "other.test": [v4("127.0.0.1")] });
    const safeFetch = createSafeFetch({ allowHosts: [`WEB.test:${web.port}`], lookup, timeoutMs: 2_000 });
    const res = await safeFetch(`http://web.test:${web.port}/text`);
    expect(res.status).toBe(200);
    expect(web.requests[0]?.headers.host).toBe(`web.test:${web.port}`);
    await failure(safeFetch(`http://other.test:${web.port}/text`));
    await failure(safeFetch(`http://127.0.0.1:${web.port}/text`));
    expect(web.requests).toHaveLength(1);
  });
});

describe("no DNS-rebinding gap: the socket goes to the address that was checked", () => {
  it("a resolver answering public, then private: the connection goes to the public answer it checked", async () => {
    // `internal` is the private service an attacker wants; `internet` stands in for the public host.
    const internal = web;
    const internet = await startFakeWeb();
    let calls = 0;
    const rebinding = vi.fn<ResolveHost>(async () => (++calls === 1 ? [v4("93.184.216.34")] : [v4("127.0.0.1")]));
    const dialed: string[] = [];
    const connect = vi.fn((target: { addresses: ResolvedAddress[]; port: number; hostname: string }) => {
      const address = target.addresses[0]!.address;
      dialed.push(`${address}:${target.port}`);
      // Route the public address to its stand-in; any other address is dialled for real (and would hit `internal`).
      return address === "93.184.216.34" ? net.connect(internet.port, "127.0.0.1") : net.connect(target.port, address);
    });
    try {
      const safeFetch = createSafeFetch({ lookup: rebinding, connect, timeoutMs: 2_000 });
      const res = await safeFetch(`http://rebind.test:${internal.port}/article/1`);
      const again = await safeFetch(`http://rebind.test:${internal.port}/article/1`).catch((e: unknown) => e);
      expect(res.status).toBe(200);
      expect(dialed[0]).toBe(`93.184.216.34:${internal.port}`);
      expect(connect.mock.calls[0]![0]).toMatchObject({ hostname: "rebind.test", addresses: [v4("93.184.216.34")] });
      expect(internet.requests[0]?.headers.host).toBe(`rebind.test:${internal.port}`);
      // The second fetch resolves afresh, sees 127.0.0.1 and refuses: the check and the dial always agree.
      expect((again as SafeFetchError).message).toMatch(
        /rebind\.test resolves to a blocked address \(127\.0\.0\.1 is a loopback/,
      );
      expect(rebinding).toHaveBeenCalledTimes(2);
      expect(internal.requests).toHaveLength(0);
    } finally {
      await internet.close();
    }
  });

  it("the default connector never asks DNS again: a changed answer cannot move the socket", async () => {
    // Two servers on one port: 127.0.0.1 (the answer that was checked) and 127.0.0.2 (the later answer).
    const rebound = await startFakeWeb({ bindAddress: "127.0.0.2", port: web.port });
    let calls = 0;
    const lookup = vi.fn<ResolveHost>(async () => (++calls === 1 ? [v4("127.0.0.1")] : [v4("127.0.0.2")]));
    try {
      const safeFetch = createSafeFetch({ allowHosts: [`pinned.test:${web.port}`], lookup, timeoutMs: 2_000 });
      const res = await safeFetch(`http://pinned.test:${web.port}/text`);
      expect(res.status).toBe(200);
      expect(res.address).toBe("127.0.0.1");
      expect(lookup).toHaveBeenCalledTimes(1);
      expect(web.requests.map((r) => r.localAddress)).toEqual(["127.0.0.1"]);
      expect(rebound.requests).toHaveLength(0);
    } finally {
      await rebound.close();
    }
  });

  it("https keeps the real host name for SNI while connecting to the checked address", async () => {
    let sni: string | undefined;
    let arrivedOn: string | undefined;
    const server = tls.createServer({
      SNICallback: (name, cb) => {
        sni = name;
        cb(new Error("no certificate here"));
      },
    });
    const sockets = new Set<net.Socket>();
    server.on("connection", (s: net.Socket) => {
      arrivedOn = s.localAddress;
      sockets.add(s);
    });
    server.on("tlsClientError", () => undefined);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as net.AddressInfo).port;
    try {
      const safeFetch = createSafeFetch({
        allowHosts: [`secure.test:${port}`],
        lookup: tableResolver({ "secure.test": [v4("127.0.0.1")] }),
        timeoutMs: 2_000,
      });
      const err = await failure(safeFetch(`https://secure.test:${port}/`));
      expect(err.code).toBe("network");
      expect(err.message).toMatch(new RegExp(`^could not fetch from secure\\.test:${port}: `));
      expect(sni).toBe("secure.test");
      expect(arrivedOn).toBe("127.0.0.1");
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe("limits", () => {
  it("times out a server that never answers, with one deadline for the whole fetch", async () => {
    const safeFetch = createSafeFetch({ allowHosts: [web.host], timeoutMs: 300 });
    const started = performance.now();
    const err = await failure(safeFetch(`${web.url}/slow?ms=5000`));
    expect(err.code).toBe("timeout");
    expect(err.message).toBe(`timed out after 0.3s fetching ${web.host}`);
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it("the deadline also covers a body that trickles in", async () => {
    const safeFetch = createSafeFetch({ allowHosts: [web.host], timeoutMs: 500 });
    const err = await failure(safeFetch(`${web.url}/drip`));
    expect(err.code).toBe("timeout");
  });

  it("the deadline covers a resolver that hangs", async () => {
    const safeFetch = createSafeFetch({ lookup: () => new Promise(() => undefined), timeoutMs: 200 });
    const err = await failure(safeFetch("http://hang.test/"));
    expect(err.code).toBe("timeout");
  });

  it("the caller's signal aborts the fetch", async () => {
    const safeFetch = createSafeFetch({ allowHosts: [web.host], timeoutMs: 5_000 });
    const ctrl = new AbortController();
    setTimeout(() => ctrl.abort(), 50);
    const err = await failure(safeFetch(`${web.url}/slow?ms=5000`, { signal: ctrl.signal }));
    expect(err.code).toBe("aborted");
  });

  it("stops reading a huge body at the cap and says it was cut", async () => {
    const safeFetch = createSafeFetch({ allowHosts: [web.host], timeoutMs: 5_000, maxBytes: 100_000 });
    const res = await safeFetch(`${web.url}/huge`);
    expect(res.truncated).toBe(true);
    expect(res.body.length).toBe(100_000);
  });

  it("caps decoded bytes, so a gzip bomb cannot inflate past the limit", async () => {
    const safeFetch = createSafeFetch({ allowHosts: [web.host], timeoutMs: 5_000, maxBytes: 1024 * 1024 });
    const res = await safeFetch(`${web.url}/bomb`);
    expect(res.truncated).toBe(true);
    expect(res.body.length).toBe(1024 * 1024);
    expect(res.body.subarray(0, 10).toString()).toBe("bomb bomb ");
  });

  it("decodes gzip, reports status, type and charset, and sends a proper request", async () => {
    const safeFetch = createSafeFetch({ allowHosts: [web.host], timeoutMs: 2_000 });
    const gz = await safeFetch(`${web.url}/gzip`);
    expect(gz.body.toString("utf8")).toContain("<!DOCTYPE html>");
    expect(gz.truncated).toBe(false);
    const missing = await safeFetch(`${web.url}/status/404?a=1&b=2`);
    expect(missing).toMatchObject({
      status: 404,
      contentType: "text/html",
      charset: "utf-8",
      url: `${web.url}/status/404?a=1&b=2`,
    });
    const seen = web.requests.at(-1)!;
    expect(seen.path).toBe("/status/404?a=1&b=2");
    expect(seen.headers.host).toBe(web.host);
    expect(seen.headers["user-agent"]).toMatch(/Mozilla\/5\.0/);
  });
});
