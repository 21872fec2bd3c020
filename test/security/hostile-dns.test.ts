/**
 * Names whose DNS never answers, asked for by a model a page talked into it. The lookups must not
 * hold the libuv thread pool (four threads shared with every dns.lookup of the process and zlib):
 * with eight such read_url calls in flight, the rest of the process still resolves and compresses
 * at once. The name servers here are UDP servers on loopback: one that never answers, one that does.
 */
import { createSocket, type Socket } from "node:dgram";
import { lookup } from "node:dns/promises";
import { promisify } from "node:util";
import { gzip } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { createReadUrlTool } from "../../src/tools/read-url.js";
import { createDnsResolveHost } from "../../src/tools/dns-resolve.js";

const sockets: Socket[] = [];
afterEach(async () => {
  await Promise.all(sockets.splice(0).map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
});

/** The name asked in a DNS query (labels from byte 12). */
function questionName(query: Buffer): { name: string; end: number } {
  const labels: string[] = [];
  let at = 12;
  while (query[at]! > 0) {
    labels.push(query.subarray(at + 1, at + 1 + query[at]!).toString("latin1"));
    at += query[at]! + 1;
  }
  return { name: labels.join("."), end: at + 5 }; // zero byte, QTYPE, QCLASS
}

/** A DNS server on loopback: `answer` gives an IPv4 address for an A query (undefined: stay silent). */
async function startDnsServer(
  answer: (name: string) => string | undefined,
): Promise<{ server: string; asked: string[] }> {
  const socket = createSocket("udp4");
  sockets.push(socket);
  const asked: string[] = [];
  socket.on("message", (query, peer) => {
    const { name, end } = questionName(query);
    asked.push(name);
    const ip = answer(name);
    if (ip === undefined) return; // never answers
    const isA = query.readUInt16BE(end - 4) === 1;
    const header = Buffer.from(query.subarray(0, 12));
    header.writeUInt16BE(0x8180, 2); // a response, recursion available, no error
    header.writeUInt16BE(isA ? 1 : 0, 6); // answers
    header.writeUInt16BE(0, 8);
    header.writeUInt16BE(0, 10);
    const record = Buffer.alloc(16);
    record.writeUInt16BE(0xc00c, 0); // the name, by pointer to the question
    record.writeUInt16BE(1, 2);
    record.writeUInt16BE(1, 4);
    record.writeUInt32BE(60, 6);
    record.writeUInt16BE(4, 10);
    ip.split(".").forEach((part, i) => record.writeUInt8(Number(part), 12 + i));
    socket.send(Buffer.concat([header, query.subarray(12, end), ...(isA ? [record] : [])]), peer.port, peer.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", () => resolve()));
  return { server: `127.0.0.1:${socket.address().port}`, asked };
}

const ctx = () => ({ signal: new AbortController().signal });

describe("DNS that never answers", () => {
  it("eight read_url calls to silent names leave the thread pool free, and each fails within its deadline", async () => {
    const dns = await startDnsServer(() => undefined);
    const readUrl = createReadUrlTool({ dnsServers: [dns.server], timeoutMs: 3_000 });
    const started = Date.now();
    const calls = Array.from({ length: 8 }, (_, i) =>
      readUrl.execute({ url: `http://silent-${i}.example.com/` }, ctx()).then(
        () => "answered",
        (error: unknown) => (error as Error).message,
      ),
    );
    // Every lookup has reached the silent server: while they hang, the process's own lookups and compression run at once.
    await expect.poll(() => new Set(dns.asked).size, { timeout: 3_000 }).toBeGreaterThanOrEqual(8);
    const probe = Date.now();
    await Promise.all([
      lookup("localhost"),
      promisify(gzip)(Buffer.alloc(64 * 1024, 1)),
      lookup("localhost"),
      promisify(gzip)(Buffer.from("x")),
    ]);
    expect(Date.now() - probe).toBeLessThan(500);

    const outcomes = await Promise.all(calls);
    expect(Date.now() - started).toBeLessThan(6_000);
    for (const outcome of outcomes) expect(outcome).toMatch(/silent-\d\.example\.com|timed out|could not resolve/);
    // The queries went to the configured server: it is the resolver used, not the system's getaddrinfo.
    expect(new Set(dns.asked)).toEqual(new Set(Array.from({ length: 8 }, (_, i) => `silent-${i}.example.com`)));
  }, 15_000);

  it("a name that resolves to a private address is still refused after resolution", async () => {
    const dns = await startDnsServer((name) => (name === "intranet.example.com" ? "10.1.2.3" : undefined));
    const readUrl = createReadUrlTool({ dnsServers: [dns.server], timeoutMs: 3_000 });
    const error = await readUrl.execute({ url: "http://intranet.example.com/" }, ctx()).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(error?.message).toMatch(/refused: intranet\.example\.com resolves to a blocked address/);
  });

  it("the resolver gives every A record and reports a silent server as a timeout", async () => {
    const dns = await startDnsServer((name) => (name === "ok.example.com" ? "93.184.216.34" : undefined));
    const resolve = createDnsResolveHost({ servers: [dns.server], timeoutMs: 200, tries: 1 });
    expect(await resolve("ok.example.com")).toEqual([{ address: "93.184.216.34", family: 4 }]);
    await expect(resolve("quiet.example.com")).rejects.toMatchObject({ code: "ETIMEOUT" });
  });
});
