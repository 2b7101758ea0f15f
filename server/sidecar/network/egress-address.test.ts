import type { LookupFunction } from "node:net";
import net from "node:net";
import os from "node:os";
import { describe, expect, it } from "vitest";
import { fixedLookup, hostAddresses, nonPublicReason, resolvePublicTarget } from "./egress-address";

const none = new net.BlockList();

describe("nonPublicReason", () => {
  it.each([
    "8.8.8.8",
    "1.1.1.1",
    "93.184.215.14",
    "2606:4700:4700::1111",
    "2a00:1450:4001:80b::200e",
  ])("lets the public address %s through", (address) => {
    expect(nonPublicReason(address, none)).toBeUndefined();
  });

  it.each([
    ["127.0.0.1", "loopback"],
    ["127.8.9.10", "loopback"],
    ["::1", "loopback"],
    ["0.0.0.0", "unspecified"],
    ["::", "unspecified"],
    ["10.1.2.3", "RFC 1918"],
    ["172.16.0.1", "RFC 1918"],
    ["172.31.255.255", "RFC 1918"],
    ["192.168.1.1", "RFC 1918"],
    ["100.64.0.1", "CGNAT"],
    ["100.127.255.254", "CGNAT"],
    ["169.254.169.254", "cloud metadata (link-local)"],
    ["169.254.1.1", "link-local"],
    ["fe80::1", "link-local"],
    ["fd00:ec2::254", "ULA (the IPv6 metadata address)"],
    ["fc00::1", "ULA"],
    ["224.0.0.1", "multicast"],
    ["ff02::1", "multicast"],
    ["255.255.255.255", "broadcast"],
    ["::ffff:127.0.0.1", "IPv4-mapped loopback"],
    ["::ffff:169.254.169.254", "IPv4-mapped metadata"],
    ["::ffff:8.8.8.8", "IPv4-mapped (refused whole)"],
    ["64:ff9b::a9fe:a9fe", "NAT64 of the metadata address"],
    ["64:ff9b::7f00:1", "NAT64 of loopback"],
    ["::7f00:1", "IPv4-compatible loopback"],
    ["2002:a9fe:a9fe::1", "6to4 of the metadata address"],
    ["2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo"],
  ])("refuses %s (%s)", (address) => {
    expect(nonPublicReason(address, none)).toMatch(/not a public address/);
  });

  it("refuses every address of this host's interfaces, public or not", () => {
    const own = new net.BlockList();
    own.addAddress("203.0.114.7", "ipv4");
    expect(nonPublicReason("203.0.114.7", own)).toBe("203.0.114.7 is an address of this host");
    expect(nonPublicReason("203.0.114.8", own)).toBeUndefined();
    for (const infos of Object.values(os.networkInterfaces())) {
      for (const info of infos ?? []) expect(nonPublicReason(info.address.replace(/%.*$/, ""), hostAddresses())).toBeDefined();
    }
  });

  it("refuses what is not an address", () => {
    expect(nonPublicReason("example.com", none)).toMatch(/not an IP address/);
  });
});

/** A resolver over a fixed table; counts its calls (one per connection: nothing to rebind). */
function tableLookup(table: Record<string, string[]>): LookupFunction & { calls: number } {
  const lookup = ((hostname: string, _options: unknown, callback: (e: NodeJS.ErrnoException | null, a: { address: string; family: number }[]) => void) => {
    lookup.calls++;
    const addresses = table[hostname];
    if (addresses === undefined) callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" }), []);
    else callback(null, addresses.map((address) => ({ address, family: net.isIP(address) })));
  }) as unknown as LookupFunction & { calls: number };
  lookup.calls = 0;
  return lookup;
}

describe("resolvePublicTarget", () => {
  const lookup = tableLookup({
    "public.example": ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"],
    "metadata.example": ["169.254.169.254"],
    "mixed.example": ["93.184.215.14", "10.0.0.5"],
    "localhost.example": ["127.0.0.1"],
  });

  it("resolves a name once and gives back every address when all are public", async () => {
    const before = lookup.calls;
    expect(await resolvePublicTarget("public.example", { lookup })).toEqual({
      ok: true,
      addresses: [
        { address: "93.184.215.14", family: 4 },
        { address: "2606:2800:21f:cb07:6820:80da:af6b:8b2c", family: 6 },
      ],
    });
    expect(lookup.calls).toBe(before + 1);
  });

  it("refuses a name with any non-public address, and says which", async () => {
    expect(await resolvePublicTarget("metadata.example", { lookup })).toMatchObject({ ok: false, reason: expect.stringMatching(/^metadata\.example resolves to 169\.254\.169\.254 is not a public address/) });
    expect(await resolvePublicTarget("mixed.example", { lookup })).toMatchObject({ ok: false, reason: expect.stringContaining("10.0.0.5") });
  });

  it("checks an IP literal as it is, brackets and all, without resolving it", async () => {
    const before = lookup.calls;
    expect(await resolvePublicTarget("169.254.169.254", { lookup })).toMatchObject({ ok: false });
    expect(await resolvePublicTarget("[::1]", { lookup })).toMatchObject({ ok: false });
    expect(await resolvePublicTarget("8.8.8.8", { lookup })).toEqual({ ok: true, addresses: [{ address: "8.8.8.8", family: 4 }] });
    expect(lookup.calls).toBe(before);
  });

  it("reports a name that does not resolve as such (not a refusal of the policy)", async () => {
    const result = await resolvePublicTarget("nowhere.example", { lookup });
    expect(result).toMatchObject({ ok: false, reason: "nowhere.example could not be resolved (ENOTFOUND)" });
    expect(result.ok === false && result.resolveError?.code).toBe("ENOTFOUND");
  });

  it("resolves shorthand forms of loopback with the system resolver, and refuses them", async () => {
    for (const host of ["localhost", "127.1", "2130706433", "0x7f.1"]) expect(await resolvePublicTarget(host)).toMatchObject({ ok: false });
  });

  it("lets a test's allow hook stand in a loopback alias for the internet, and nothing else", async () => {
    const allow = (address: string) => address === "127.0.0.2";
    expect(await resolvePublicTarget("127.0.0.2", { allow })).toMatchObject({ ok: true });
    expect(await resolvePublicTarget("127.0.0.1", { allow })).toMatchObject({ ok: false });
    expect(await resolvePublicTarget("localhost.example", { lookup, allow })).toMatchObject({ ok: false });
  });
});

describe("fixedLookup", () => {
  it("hands out only the checked addresses, by family when asked", () => {
    const lookup = fixedLookup([
      { address: "93.184.215.14", family: 4 },
      { address: "2606:2800:21f:cb07:6820:80da:af6b:8b2c", family: 6 },
    ]);
    const seen: unknown[] = [];
    lookup("rebind.example", { all: true }, (_e, a) => seen.push(a));
    lookup("rebind.example", { family: 6 }, (_e, a, f) => seen.push([a, f]));
    expect(seen).toEqual([
      [
        { address: "93.184.215.14", family: 4 },
        { address: "2606:2800:21f:cb07:6820:80da:af6b:8b2c", family: 6 },
      ],
      ["2606:2800:21f:cb07:6820:80da:af6b:8b2c", 6],
    ]);
  });
});
