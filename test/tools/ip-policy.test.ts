import { describe, expect, it } from "vitest";
import { checkAddress, checkHostName, parseIpLiteral } from "../../src/tools/ip-policy.js";

describe("checkAddress", () => {
  const refused: [string, RegExp][] = [
    ["127.0.0.1", /loopback/],
    ["127.255.255.254", /loopback/],
    ["10.1.2.3", /private/],
    ["172.16.0.1", /private/],
    ["172.31.255.255", /private/],
    ["192.168.1.1", /private/],
    ["169.254.1.1", /link-local/],
    ["169.254.169.254", /metadata/],
    ["100.64.0.1", /carrier-grade NAT/],
    ["100.127.255.254", /carrier-grade NAT/],
    ["100.100.100.200", /metadata/],
    ["0.0.0.0", /unspecified/],
    ["0.1.2.3", /unspecified/],
    ["224.0.0.1", /multicast/],
    ["239.255.255.250", /multicast/],
    ["255.255.255.255", /broadcast/],
    ["240.0.0.1", /reserved/],
    ["192.0.2.1", /reserved/],
    ["198.18.0.1", /reserved/],
    ["::1", /loopback/],
    ["::", /unspecified/],
    ["fc00::1", /private/],
    ["fd12:3456::1", /private/],
    ["fd00:ec2::254", /metadata/],
    ["fe80::1", /link-local/],
    ["fe80::1%eth0", /link-local/],
    ["fec0::1", /site-local/],
    ["ff02::1", /multicast/],
    ["::ffff:127.0.0.1", /carries 127\.0\.0\.1, which is a loopback/],
    ["::ffff:7f00:1", /carries 127\.0\.0\.1/],
    ["::ffff:10.0.0.1", /carries 10\.0\.0\.1, which is a private/],
    ["::ffff:169.254.169.254", /metadata/],
    ["::ffff:0:127.0.0.1", /carries 127\.0\.0\.1/],
    ["::127.0.0.1", /carries 127\.0\.0\.1/],
    ["64:ff9b::127.0.0.1", /carries 127\.0\.0\.1/],
    ["64:ff9b::a00:1", /carries 10\.0\.0\.1/],
    ["64:ff9b:1::1", /local-use NAT64/],
    ["2002:7f00:1::", /carries 127\.0\.0\.1/],
    ["2002:c0a8:101::1", /carries 192\.168\.1\.1/],
    ["2001:0:4136:e378:8000:63bf:3fff:fdd2", /Teredo/],
    ["2001:db8::1", /reserved/],
    ["100::1", /discard/],
    ["4000::1", /not a public address/],
  ];
  it.each(refused)("refuses %s", (address, why) => {
    const verdict = checkAddress(address);
    expect(verdict.allowed).toBe(false);
    if (!verdict.allowed) {
      expect(verdict.reason).toMatch(why);
      expect(verdict.reason.startsWith(address)).toBe(true);
    }
  });

  it.each([
    "8.8.8.8",
    "1.1.1.1",
    "93.184.216.34",
    "100.63.255.255",
    "100.128.0.1",
    "172.32.0.1",
    "2606:4700:4700::1111",
    "2a00:1450:4001:80b::200e",
    "::ffff:8.8.8.8",
    "64:ff9b::808:808",
    "2002:808:808::1",
  ])("allows the public address %s", (address) => {
    expect(checkAddress(address)).toEqual({ allowed: true });
  });

  it("refuses text that is not an address instead of guessing", () => {
    expect(checkAddress("example.com")).toEqual({ allowed: false, reason: "example.com is not an IP address" });
    // Only canonical dotted quads count as literals: the URL parser normalises other spellings first.
    expect(parseIpLiteral("0x7f.1")).toBeUndefined();
    expect(parseIpLiteral("2130706433")).toBeUndefined();
    expect(parseIpLiteral("[::1]")?.toString()).toBe("::1");
  });
});

describe("checkHostName", () => {
  it.each([
    "localhost",
    "LOCALHOST",
    "localhost.",
    "api.localhost",
    "metadata.google.internal",
    "metadata.google.internal.",
    "metadata.goog",
  ])("refuses %s by name", (name) => {
    expect(checkHostName(name).allowed).toBe(false);
  });
  it("lets other names through to resolution", () => {
    expect(checkHostName("example.com")).toEqual({ allowed: true });
    expect(checkHostName("localhost.example.com")).toEqual({ allowed: true });
  });
});
