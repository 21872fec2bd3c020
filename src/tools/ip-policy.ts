/**
 * Which IP addresses `read_url` may connect to: public unicast only; a refusal says why in words a model can
 * repeat. IPv6 forms that carry an IPv4 address (mapped, compatible, NAT64, 6to4) are judged by that address,
 * because that is where the packets end up.
 */
import ipaddr from "ipaddr.js";

/** The outcome of checking one address. */
export type AddressVerdict = { allowed: true } | { allowed: false; reason: string };

/** Well-known cloud metadata endpoints: named explicitly so the refusal says what they are. */
const METADATA_ADDRESSES = new Set(["169.254.169.254", "fd00:ec2::254", "169.254.170.2", "100.100.100.200"]);

/** Host names that are private by definition, refused before any DNS lookup. */
const PRIVATE_NAMES = ["localhost", "metadata.google.internal", "metadata.goog", "metadata"];

const IPV4_REASONS: Record<string, string> = {
  unspecified: "an unspecified (0.0.0.0/8) address",
  broadcast: "the broadcast address",
  multicast: "a multicast address",
  linkLocal: "a link-local address",
  loopback: "a loopback address",
  carrierGradeNat: "a carrier-grade NAT (100.64.0.0/10) address",
  private: "a private address",
  reserved: "a reserved address",
  as112: "a reserved (AS112) address",
  amt: "a reserved (AMT) address",
};

const IPV6_REASONS: Record<string, string> = {
  unspecified: "an unspecified (::) address",
  linkLocal: "a link-local (fe80::/10) address",
  multicast: "a multicast address",
  loopback: "a loopback address",
  uniqueLocal: "a private (fc00::/7) address",
  deprecatedSiteLocal: "a site-local (fec0::/10) address",
  teredo: "a Teredo tunnel address",
  discard: "a discard-only address",
  benchmarking: "a benchmarking address",
  reserved: "a reserved address",
  rfc6052: "a local-use NAT64 (64:ff9b:1::/48) address",
};

/** Parses an IP literal (IPv4 dotted quad or IPv6, with or without brackets); undefined when it is not one. */
export function parseIpLiteral(text: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  const bare = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text;
  // Only canonical spellings: the WHATWG URL parser has already turned 0x7f.1 and friends into dotted quads.
  if (ipaddr.IPv4.isValidFourPartDecimal(bare)) return ipaddr.IPv4.parse(bare);
  if (ipaddr.IPv6.isValid(bare)) return ipaddr.IPv6.parse(bare);
  return undefined;
}

/** Judges one resolved or literal address. */
export function checkAddress(address: string): AddressVerdict {
  const ip = parseIpLiteral(address);
  if (!ip) return { allowed: false, reason: `${address} is not an IP address` };
  const problem = ip.kind() === "ipv4" ? ipv4Problem(ip as ipaddr.IPv4) : ipv6Problem(ip as ipaddr.IPv6);
  return problem === undefined ? { allowed: true } : { allowed: false, reason: `${address} ${problem}` };
}

/** Refuses names that are private by definition (localhost, metadata hosts) before resolving them. */
export function checkHostName(hostname: string): AddressVerdict {
  const name = hostname.toLowerCase().replace(/\.$/, "");
  if (name === "localhost" || name.endsWith(".localhost"))
    return { allowed: false, reason: `${hostname} is a loopback name` };
  if (PRIVATE_NAMES.includes(name)) return { allowed: false, reason: `${hostname} is a cloud metadata host` };
  return { allowed: true };
}

/** What is wrong with an IPv4 address ("is a loopback address"), or undefined when it is public. */
function ipv4Problem(ip: ipaddr.IPv4): string | undefined {
  if (METADATA_ADDRESSES.has(ip.toString())) return "is a cloud metadata address";
  const range = ip.range();
  if (range === "unicast") return undefined;
  return `is ${IPV4_REASONS[range] ?? `a ${range} address`}`;
}

/** What is wrong with an IPv6 address, or undefined when it is public global unicast. */
function ipv6Problem(ip: ipaddr.IPv6): string | undefined {
  if (METADATA_ADDRESSES.has(ip.toRFC5952String())) return "is a cloud metadata address";
  const embedded = embeddedIpv4(ip);
  if (embedded) {
    const inner = ipv4Problem(embedded);
    return inner === undefined ? undefined : `carries ${embedded.toString()}, which ${inner}`;
  }
  const range = ip.range();
  // Global unicast is 2000::/3; anything else ipaddr.js calls "unicast" is unassigned space.
  const globalUnicast = (ip.parts[0]! & 0xe000) === 0x2000;
  if (range === "unicast" && globalUnicast) return undefined;
  return `is ${IPV6_REASONS[range] ?? "not a public address"}`;
}

/** The IPv4 address an IPv6 address carries, for the forms that route to it. */
function embeddedIpv4(ip: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  const p = ip.parts;
  const tail = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
  const range = ip.range();
  switch (range) {
    case "ipv4Mapped": // ::ffff:a.b.c.d
    case "rfc6145": // ::ffff:0:a.b.c.d
      return tail(p[6]!, p[7]!);
    case "rfc6052": // 64:ff9b::a.b.c.d (NAT64); the local-use 64:ff9b:1::/48 is refused by range below
      return p[2] === 0 ? tail(p[6]!, p[7]!) : undefined;
    case "6to4": // 2002:AABB:CCDD::
      return tail(p[1]!, p[2]!);
    default:
      break;
  }
  // IPv4-compatible ::a.b.c.d (deprecated, but some stacks still route it); :: and ::1 are judged as IPv6.
  if (p.slice(0, 6).every((x) => x === 0) && (p[6] !== 0 || p[7]! > 1)) return tail(p[6]!, p[7]!);
  return undefined;
}
