/**
 * One POST to a push service, only ever to a public address. A subscription's endpoint is
 * checked when it is stored (https, a DNS name, not localhost), but a name can resolve to a
 * private or link-local address (a metadata service, the database, the sidecar's own ports):
 * the address is checked inside the connection's own DNS lookup, so the address checked is the
 * address connected to (no second resolution to rebind). Redirects are never followed.
 *
 * Owns: the request and the address rule. Must not: know about payloads or subscriptions.
 */
import dns, { type LookupAddress } from "node:dns";
import http from "node:http";
import https from "node:https";
import net from "node:net";

/** Ranges a push service never lives in: this host, private networks, link-local, CGNAT, multicast, documentation. */
const nonPublic = new net.BlockList();
for (const [address, prefix] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
] as const) {
  nonPublic.addSubnet(address, prefix, "ipv4");
}
for (const [address, prefix] of [
  ["::", 127], // :: and ::1
  ["64:ff9b::", 96], // NAT64 of any IPv4 address, private ones included
  ["100::", 64],
  ["2001:db8::", 32],
  ["fc00::", 7],
  ["fe80::", 10],
  ["ff00::", 8],
] as const) {
  nonPublic.addSubnet(address, prefix, "ipv6");
}

/** Whether an address may receive the instance's pushes. */
export function isPublicAddress(address: string): boolean {
  const family = net.isIP(address);
  if (family === 0) return false;
  // IPv4-mapped IPv6 (`::ffff:a.b.c.d`): refused outright (a BlockList rule for the range would
  // also match every IPv4 address, which it checks as mapped)
  if (family === 6 && /^::ffff:/i.test(new URL(`http://[${address}]`).hostname.slice(1))) return false;
  return !nonPublic.check(address, family === 4 ? "ipv4" : "ipv6");
}

/** The error when an endpoint leads to a non-public address. */
export class NonPublicEndpoint extends Error {
  readonly code = "ENONPUBLIC";
  constructor(host: string, address: string) {
    super(`push endpoint ${host} resolves to ${address}, which is not a public address`);
    this.name = "NonPublicEndpoint";
  }
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** `dns.lookup`, refusing names with any non-public address. */
function publicOnlyLookup(hostname: string, options: dns.LookupOptions, callback: LookupCallback): void {
  dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, []);
    const bad = addresses.find((a) => !isPublicAddress(a.address));
    if (bad !== undefined) return callback(new NonPublicEndpoint(hostname, bad.address), []);
    if (options.all === true) return callback(null, addresses);
    const first = addresses[0];
    if (first === undefined) return callback(Object.assign(new Error(`${hostname} has no address`), { code: "ENOTFOUND" }), []);
    callback(null, first.address, first.family);
  });
}

export interface PushPost {
  method: string;
  headers: Record<string, string>;
  body: Uint8Array | null;
  timeoutMs: number;
  /** Tests only: a push service on this host. */
  allowNonPublic?: boolean;
}

/** POSTs to `endpoint` and resolves with the status (the answer's body is discarded). */
export function postToPushService(endpoint: string, post: PushPost): Promise<{ status: number }> {
  const url = new URL(endpoint);
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (!post.allowNonPublic && net.isIP(host) !== 0 && !isPublicAddress(host)) return Promise.reject(new NonPublicEndpoint(host, host));
  const client = url.protocol === "https:" ? https : url.protocol === "http:" ? http : undefined;
  if (client === undefined) return Promise.reject(new Error(`push endpoint ${url.protocol} is not http(s)`));
  return new Promise((resolve, reject) => {
    const req = client.request(
      url,
      {
        method: post.method,
        headers: { ...post.headers, "content-length": String(post.body?.byteLength ?? 0) },
        timeout: post.timeoutMs,
        ...(post.allowNonPublic ? {} : { lookup: publicOnlyLookup as unknown as typeof dns.lookup }),
      },
      (res) => {
        res.resume();
        res.once("end", () => resolve({ status: res.statusCode ?? 0 }));
        res.once("error", reject);
      },
    );
    req.once("timeout", () => req.destroy(new Error(`push service did not answer within ${post.timeoutMs} ms`)));
    req.once("error", reject);
    req.end(post.body ?? undefined);
  });
}
