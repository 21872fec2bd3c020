/**
 * Name resolution for hosts the model asks for, with c-ares from the event loop rather than `dns.lookup`,
 * which holds one of libuv's four pool threads until the system resolver gives up: a few names whose DNS never
 * answers would stall every other lookup and zlib. c-ares skips /etc/hosts; the operator's names in a hosts
 * file are reached through READ_URL_ALLOW_HOSTS with the system resolver.
 */
import { Resolver } from "node:dns/promises";

/** One address a host name resolved to. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to all of its addresses. */
export type ResolveHost = (hostname: string) => Promise<ResolvedAddress[]>;

/** Limits of the resolver. */
interface DnsResolveOptions {
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
