/**
 * Which addresses the egress proxy of an `open` workspace may connect to: any public one, never
 * this host or a network behind it. The rule is applied to the resolved address at connect time
 * ({@link resolvePublicTarget}): the proxy resolves a name once, checks every address it got, and
 * connects only to those (a name that resolves to a public address for the check and to
 * 127.0.0.1 for the connection — DNS rebinding — has no second resolution to exploit).
 *
 * Refused: the ranges of `isPublicAddress` (server/push, the same rule the push sender uses:
 * loopback, RFC 1918, CGNAT 100.64/10, link-local 169.254/16 with the cloud metadata address,
 * ULA fc00::/7, fe80::/10, multicast, unspecified, documentation and reserved ranges, IPv4-mapped
 * `::ffff:a.b.c.d` and NAT64 `64:ff9b::/96`), the IPv6 forms that carry an IPv4 address some
 * hosts still route (IPv4-compatible `::a.b.c.d`, 6to4 2002::/16, Teredo 2001::/32), and every
 * address of this host's own interfaces (a public address on eth0 leads to the sidecar's ports).
 */
import type { LookupAddress } from "node:dns";
import dns from "node:dns";
import net, { type LookupFunction } from "node:net";
import os from "node:os";
import { isPublicAddress } from "@/server/push/public-endpoint-post";

/** IPv6 forms with an IPv4 address inside that `isPublicAddress` lets through. */
const embeddedIpv4 = new net.BlockList();
embeddedIpv4.addSubnet("::", 96, "ipv6"); // IPv4-compatible (deprecated)
embeddedIpv4.addSubnet("2002::", 16, "ipv6"); // 6to4
embeddedIpv4.addSubnet("2001::", 32, "ipv6"); // Teredo

/** Every address of this host's interfaces, in the form `net.BlockList` compares. */
export function hostAddresses(): net.BlockList {
  const list = new net.BlockList();
  for (const infos of Object.values(os.networkInterfaces())) {
    for (const info of infos ?? []) {
      const address = info.address.replace(/%.*$/, "");
      if (net.isIP(address) !== 0) list.addAddress(address, info.family === "IPv6" ? "ipv6" : "ipv4");
    }
  }
  return list;
}

/**
 * Why the egress proxy of an open workspace may not connect to `address` (an IP address), or
 * undefined when it may. `own` is this host's addresses ({@link hostAddresses}).
 */
export function nonPublicReason(address: string, own: net.BlockList = hostAddresses()): string | undefined {
  const family = net.isIP(address);
  if (family === 0) return `${address} is not an IP address`;
  const type = family === 4 ? "ipv4" : "ipv6";
  if (own.check(address, type)) return `${address} is an address of this host`;
  if (!isPublicAddress(address) || (family === 6 && embeddedIpv4.check(address, "ipv6"))) {
    return `${address} is not a public address (loopback, private, CGNAT, link-local such as the cloud metadata service, multicast or reserved)`;
  }
  return undefined;
}

/** An address the proxy may connect to, or why not. */
export type PublicTarget = { ok: true; addresses: LookupAddress[] } | { ok: false; reason: string; resolveError?: NodeJS.ErrnoException };

/**
 * Resolves `host` (a name, or an IP literal, which is checked as it is) and checks every address;
 * a single non-public one refuses the whole name. `allow` marks addresses a test or a bench
 * treats as public (a loopback alias standing in for the internet); production passes none.
 */
export async function resolvePublicTarget(
  host: string,
  options: { lookup?: LookupFunction | undefined; allow?: ((address: string) => boolean) | undefined } = {},
): Promise<PublicTarget> {
  const bare = host.replace(/^\[|\]$/g, "");
  let addresses: LookupAddress[];
  const literal = net.isIP(bare);
  if (literal !== 0) addresses = [{ address: bare, family: literal }];
  else {
    try {
      addresses = await lookupAll(bare, options.lookup);
    } catch (error) {
      const resolveError = error as NodeJS.ErrnoException;
      return { ok: false, reason: `${bare} could not be resolved (${resolveError.code ?? resolveError.message})`, resolveError };
    }
    if (addresses.length === 0) return { ok: false, reason: `${bare} has no address` };
  }
  const own = hostAddresses();
  for (const { address } of addresses) {
    if (options.allow?.(address) === true) continue;
    const why = nonPublicReason(address, own);
    if (why !== undefined) return { ok: false, reason: literal !== 0 ? why : `${bare} resolves to ${why}` };
  }
  return { ok: true, addresses };
}

function lookupAll(hostname: string, lookup: LookupFunction | undefined): Promise<LookupAddress[]> {
  return new Promise((resolve, reject) => {
    const callback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => {
      if (error) reject(error);
      else resolve(Array.isArray(address) ? address : [{ address, family: family ?? net.isIP(address) }]);
    };
    if (lookup) lookup(hostname, { all: true }, callback as Parameters<LookupFunction>[2]);
    else dns.lookup(hostname, { all: true }, callback);
  });
}

/** A `lookup` for `net.connect` that hands out exactly these (already checked) addresses. */
export function fixedLookup(addresses: readonly LookupAddress[]): LookupFunction {
  return (_hostname, options, callback) => {
    const family = (options as { family?: number }).family;
    const matching = addresses.filter((a) => family === undefined || family === 0 || a.family === family);
    const list = matching.length > 0 ? matching : addresses;
    if ((options as { all?: boolean }).all) (callback as (e: null, a: LookupAddress[]) => void)(null, [...list]);
    else callback(null, list[0]!.address, list[0]!.family);
  };
}
