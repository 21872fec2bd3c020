/**
 * An HTTP GET the model (so any user or web page) may aim anywhere, made safe: http(s) only; the host is
 * resolved once, EVERY address is checked (ip-policy.ts) and the socket gets exactly the checked addresses,
 * so DNS rebinding cannot steer it elsewhere. Each redirect hop is checked again; body capped, one deadline.
 */
import { lookup as dnsLookup } from "node:dns/promises";
import type { LookupAddress, LookupOptions } from "node:dns";
import http, { type IncomingMessage } from "node:http";
import net, { type Socket } from "node:net";
import tls from "node:tls";
import type { Readable, Transform } from "node:stream";
import zlib from "node:zlib";
import { networkErrorWords } from "./network-error-words.js";
import { checkAddress, checkHostName, parseIpLiteral } from "./ip-policy.js";
import { ToolError } from "./tool-error.js";
import { collectCapped } from "../shared/read-capped.js";
import { createDnsResolveHost, type ResolvedAddress, type ResolveHost } from "./dns-resolve.js";
import { cutText } from "../shared/text-cut.js";

/** Where a connection must go: the name (for SNI and Host) and the addresses that passed the check. */
export interface ConnectTarget {
  hostname: string;
  port: number;
  addresses: ResolvedAddress[];
  tls: boolean;
}

/** Opens the socket for one request; must connect only to `target.addresses`. */
export type Connect = (target: ConnectTarget) => Socket;

/** Options of a guarded fetcher. */
export interface SafeFetchOptions {
  /** "host:port" pairs that may be reached even when they resolve to private addresses. */
  allowHosts?: readonly string[];
  /** Resolves names the model asked for (default: c-ares, see dns-resolve.ts); allow-listed names use the system resolver. */
  lookup?: ResolveHost;
  /** Name servers for the default resolver; default: the system's. */
  dnsServers?: readonly string[];
  connect?: Connect;
  /** One deadline for resolution, connection, redirects and body together. */
  timeoutMs?: number;
  /** Stop reading the body past this many (decoded) bytes. */
  maxBytes?: number;
  maxRedirects?: number;
}

/** A fetched resource (any status: the caller decides what a 404 means). */
export interface SafeResponse {
  /** The final URL after redirects. */
  url: string;
  status: number;
  /** Media type, lower case, without parameters ("" when the server sent none). */
  contentType: string;
  /** The charset parameter of Content-Type, if any. */
  charset: string | undefined;
  body: Buffer;
  /** True when the body was cut at `maxBytes`. */
  truncated: boolean;
  /** The address the final request was sent to. */
  address: string;
}

/** A guarded GET. */
export type SafeFetch = (url: string, init?: { signal?: AbortSignal; accept?: string }) => Promise<SafeResponse>;

/** A guarded fetch that failed or was refused; the message is short and safe to show the model. */
export class SafeFetchError extends ToolError {
  constructor(
    readonly code: "invalid-url" | "refused" | "dns" | "network" | "timeout" | "aborted",
    message: string,
  ) {
    super(message);
  }
}

const USER_AGENT = "Mozilla/5.0 (compatible; local-llm-chatbot/0.1)";
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const DECODERS = new Map<string, () => Transform>([
  ["gzip", zlib.createGunzip],
  ["x-gzip", zlib.createGunzip],
  ["deflate", zlib.createInflate],
  ["br", zlib.createBrotliDecompress],
]);

/** The system resolver: every address, in the resolver's order. */
const systemResolveHost: ResolveHost = async (hostname) => {
  const found = await dnsLookup(hostname, { all: true, verbatim: true });
  return found.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

/** A `net` lookup function that answers only with already-checked addresses, never asking DNS again. */
function pinnedLookup(addresses: readonly ResolvedAddress[]) {
  return (
    _hostname: string,
    options: LookupOptions,
    callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
  ): void => {
    const wanted =
      options.family === 4 || options.family === 6 ? addresses.filter((a) => a.family === options.family) : addresses;
    const list = wanted.length > 0 ? wanted : addresses;
    if (options.all)
      return callback(
        null,
        list.map(({ address, family }) => ({ address, family })),
      );
    callback(null, list[0]!.address, list[0]!.family);
  };
}

/** Connects to the checked addresses; TLS keeps the real host name for SNI and certificate checks. */
const defaultConnect: Connect = (target) => {
  const base = {
    host: target.hostname,
    port: target.port,
    lookup: pinnedLookup(target.addresses),
    autoSelectFamily: target.addresses.length > 1,
  };
  if (!target.tls) return net.connect(base);
  const servername = net.isIP(target.hostname) ? undefined : target.hostname;
  return tls.connect({ ...base, ...(servername ? { servername } : {}), ALPNProtocols: ["http/1.1"] });
};

/** Builds a guarded GET with the given policy and limits. */
export function createSafeFetch(options: SafeFetchOptions = {}): SafeFetch {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const maxBytes = options.maxBytes ?? 2 * 1024 * 1024;
  const maxRedirects = options.maxRedirects ?? 5;
  const resolveHost = options.lookup ?? createDnsResolveHost(options.dnsServers ? { servers: options.dnsServers } : {});
  // Allow-listed hosts are the operator's (often names only /etc/hosts or a container network knows).
  const resolveAllowed = options.lookup ?? systemResolveHost;
  const connect = options.connect ?? defaultConnect;
  const allowed = new Set(
    (options.allowHosts ?? []).map(normaliseHostPort).filter((x): x is string => x !== undefined),
  );

  async function target(url: URL, shown: string): Promise<ConnectTarget> {
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      throw new SafeFetchError(
        "refused",
        `refused: only http and https URLs can be read (got ${url.protocol} in ${shown})`,
      );
    }
    const port = url.port ? Number(url.port) : url.protocol === "https:" ? 443 : 80;
    const hostname = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
    const bypass = allowed.has(`${url.hostname}:${port}`);
    const tlsWanted = url.protocol === "https:";
    const literal = parseIpLiteral(hostname);
    if (literal) {
      const address = literal.toString();
      if (!bypass) refuseUnless(checkAddress(hostname), shown);
      return { hostname, port, tls: tlsWanted, addresses: [{ address, family: literal.kind() === "ipv6" ? 6 : 4 }] };
    }
    if (!bypass) refuseUnless(checkHostName(hostname), shown);
    let addresses: ResolvedAddress[];
    try {
      addresses = await (bypass ? resolveAllowed : resolveHost)(hostname);
    } catch (err) {
      throw new SafeFetchError("dns", `could not resolve host ${hostname} (${errorCode(err)})`);
    }
    if (addresses.length === 0) throw new SafeFetchError("dns", `could not resolve host ${hostname} (no addresses)`);
    // Every answer is checked: a name with one public and one private address is refused outright.
    for (const a of bypass ? [] : addresses) {
      const verdict = checkAddress(a.address);
      if (!verdict.allowed)
        throw new SafeFetchError(
          "refused",
          `refused: ${hostname} resolves to a blocked address (${verdict.reason})${hopNote(shown)}`,
        );
    }
    return { hostname, port, tls: tlsWanted, addresses };
  }

  return async function safeFetch(rawUrl, init = {}) {
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), timeoutMs);
    const onCallerAbort = () => deadline.abort();
    init.signal?.addEventListener("abort", onCallerAbort, { once: true });
    if (init.signal?.aborted) deadline.abort();
    let host = "";
    try {
      let url = parseUrl(rawUrl);
      for (let hop = 0; ; hop++) {
        host = url.host;
        const shown = hop === 0 ? url.href : `redirect to ${url.href}`;
        const where = await raceAbort(target(url, shown), deadline.signal);
        const res = await request(url, where, connect, init.accept, deadline.signal);
        const address = res.socket?.remoteAddress ?? where.addresses[0]!.address;
        const location = res.headers.location;
        if (REDIRECTS.has(res.statusCode ?? 0) && location) {
          res.destroy();
          if (hop >= maxRedirects) throw new SafeFetchError("refused", `refused: more than ${maxRedirects} redirects`);
          url = parseUrl(location, url);
          continue;
        }
        const { body, truncated } = await readCapped(res, maxBytes, deadline.signal);
        const [media, ...params] = (res.headers["content-type"] ?? "").split(";");
        const charset = params.map((p) => p.trim().match(/^charset\s*=\s*"?([^";\s]+)"?$/i)?.[1]).find(Boolean);
        return {
          url: url.href,
          status: res.statusCode ?? 0,
          contentType: (media ?? "").trim().toLowerCase(),
          charset: charset?.toLowerCase(),
          body,
          truncated,
          address,
        };
      }
    } catch (err) {
      // Whichever step was running, a fired deadline or caller abort is what gets reported.
      if (err instanceof SafeFetchError) throw err;
      if (init.signal?.aborted) throw new SafeFetchError("aborted", "aborted");
      if (deadline.signal.aborted)
        throw new SafeFetchError("timeout", `timed out after ${formatSeconds(timeoutMs)} fetching ${host}`);
      throw new SafeFetchError("network", `could not fetch from ${host}: ${errorCode(err)}`);
    } finally {
      clearTimeout(timer);
      init.signal?.removeEventListener("abort", onCallerAbort);
    }
  };
}

/** "Host:Port" from configuration, canonicalised the way the URL parser spells hosts. */
function normaliseHostPort(entry: string): string | undefined {
  const m = entry.trim().match(/^(.+):(\d{1,5})$/);
  if (!m) return undefined;
  try {
    return `${new URL(`http://${m[1]}/`).hostname}:${Number(m[2])}`;
  } catch {
    // A malformed entry allows nothing; config validation reports it at start.
    return undefined;
  }
}

function parseUrl(raw: string, base?: URL): URL {
  try {
    return new URL(raw.trim(), base);
  } catch {
    throw new SafeFetchError("invalid-url", `invalid URL: ${JSON.stringify(cutText(raw, 200))}`);
  }
}

function refuseUnless(verdict: ReturnType<typeof checkAddress>, shown: string): void {
  if (!verdict.allowed) throw new SafeFetchError("refused", `refused: ${verdict.reason}${hopNote(shown)}`);
}

/** On a redirect hop the refusal names the redirect, so the model knows the first URL was not the problem. */
function hopNote(shown: string): string {
  return shown.startsWith("redirect") ? ` (${shown})` : "";
}

/** Sends one GET over a socket from `connect` and resolves with the response head. */
function request(
  url: URL,
  where: ConnectTarget,
  connect: Connect,
  accept: string | undefined,
  signal: AbortSignal,
): Promise<IncomingMessage> {
  const req = http.request({
    host: where.hostname,
    port: where.port,
    method: "GET",
    path: `${url.pathname}${url.search}`,
    // url.host keeps the port only when it is not the default, as browsers send it.
    headers: {
      Host: url.host,
      "User-Agent": USER_AGENT,
      Accept: accept ?? "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5",
      "Accept-Encoding": "gzip, deflate, br",
      Connection: "close",
    },
    createConnection: () => connect(where),
  });
  const onAbort = () => req.destroy(new Error("aborted"));
  signal.addEventListener("abort", onAbort, { once: true });
  const head = new Promise<IncomingMessage>((resolve, reject) => req.once("response", resolve).once("error", reject));
  req.end();
  return head.finally(() => signal.removeEventListener("abort", onAbort));
}

/** Reads a (possibly compressed) body up to `maxBytes` of decoded data, then hangs up. */
async function readCapped(
  res: IncomingMessage,
  maxBytes: number,
  signal: AbortSignal,
): Promise<{ body: Buffer; truncated: boolean }> {
  const encoding = String(res.headers["content-encoding"] ?? "")
    .trim()
    .toLowerCase();
  const decoder = DECODERS.get(encoding)?.();
  const stream: Readable = decoder ? res.pipe(decoder) : res;
  if (decoder) res.once("error", (err) => decoder.destroy(err));
  const onAbort = () => stream.destroy(new Error("aborted"));
  signal.addEventListener("abort", onAbort, { once: true });
  try {
    // Past the cap the rest is not read at all: hanging up also stops a decompression bomb.
    const { bytes, truncated } = await collectCapped(stream as AsyncIterable<Buffer>, maxBytes);
    return { body: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), truncated };
  } finally {
    signal.removeEventListener("abort", onAbort);
    res.destroy();
    decoder?.destroy();
  }
}

/** Rejects as soon as the signal fires, for steps (like DNS) that cannot be cancelled themselves. */
function raceAbort<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new Error("aborted"));
  let onAbort = () => {};
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(new Error("aborted"));
    signal.addEventListener("abort", onAbort, { once: true });
  });
  return Promise.race([work, aborted]).finally(() => signal.removeEventListener("abort", onAbort));
}

function errorCode(err: unknown): string {
  if (err && typeof err === "object") {
    const e = err as { code?: unknown; message?: unknown };
    if (typeof e.code === "string") return networkErrorWords(e.code);
    if (typeof e.message === "string") return cutText(e.message.split("\n")[0]!, 120);
  }
  return cutText(String(err), 120);
}

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${(ms / 1000).toFixed(1)}s`;
}
