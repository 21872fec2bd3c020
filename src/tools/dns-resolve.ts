/**
 * Name resolution for addresses the model asks for, without the libuv thread pool.
 *
 * `dns.lookup` (getaddrinfo) runs on one of the pool's four threads and holds it until the system
 * resolver gives up, whatever the caller's deadline: eight names whose DNS never answers would stall
 * every other lookup of the process (the model host, the platforms' APIs) and zlib. c-ares
 * (`dns.promises.Resolver`) sends its queries from the event loop, with its own timeout and tries.
 * It reads the system's name servers but not /etc/hosts: names only a hosts file knows are the
 * operator's, and those are reached through READ_URL_ALLOW_HOSTS with the system resolver.
 */
import { Resolver } from "node:dns/promises";

/** One address a host name resolved to. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to all of its addresses (injected in tests; defaults to the system resolver). */
export type ResolveHost = (hostname: string) => Promise<ResolvedAddress[]>;

/** Limits of the resolver. */
export interface DnsResolveOptions {
  /** Name servers ("127.0.0.1:5353"); default: the system's (/etc/resolv.conf). */
  servers?: readonly string[];
  /** Time one query may take before it is sent again (default 2 s). */
  timeoutMs?: number;
  /** Attempts per query (default 2). */
  tries?: number;
}

/** Error codes that only say "no record of this type", not "the name is unknown". */
const NO_RECORDS = new Set(["ENODATA", "ENOTFOUND"]);

/** Builds a resolver that asks for A and AAAA records together and never touches the thread pool. */
export function createDnsResolveHost(opts: DnsResolveOptions = {}): ResolveHost {
  const resolver = new Resolver({ timeout: opts.timeoutMs ?? 2_000, tries: opts.tries ?? 2 });
  if (opts.servers && opts.servers.length > 0) resolver.setServers([...opts.servers]);
  return async (hostname) => {
    const [v4, v6] = await Promise.allSettled([resolver.resolve4(hostname), resolver.resolve6(hostname)]);
    const found: ResolvedAddress[] = [
      ...(v4.status === "fulfilled" ? v4.value.map((address) => ({ address, family: 4 as const })) : []),
      ...(v6.status === "fulfilled" ? v6.value.map((address) => ({ address, family: 6 as const })) : []),
    ];
    if (found.length > 0) return found;
    const failures = [v4, v6]
      .filter((r): r is PromiseRejectedResult => r.status === "rejected")
      .map((r) => r.reason as NodeJS.ErrnoException);
    // A timeout or a refused query says more than "no AAAA record".
    throw (
      failures.find((e) => !NO_RECORDS.has(String(e.code))) ??
      failures[0] ??
      Object.assign(new Error("no addresses"), { code: "ENODATA" })
    );
  };
}
