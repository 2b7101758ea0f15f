/** What the runtime adapter knows about the connection a request arrived on. */
export interface ClientInfo {
  /** Address of the peer that opened the TCP connection (the browser, or a trusted proxy). */
  clientIp?: string;
}

/** How a request is presented to an upstream, and who it is counted against. */
export interface Forwarding {
  /** The address rate limits count against. */
  clientKey: string;
  /** The origin the browser used to reach Conduit, e.g. `http://127.0.0.1:3000`. */
  requestOrigin: string;
  /** Incoming headers the upstream must not see (a client could have forged them). */
  remove: string[];
  /** Headers to set on the upstream request. */
  set: Record<string, string>;
}

const firstValue = (value: string | null): string | undefined => value?.split(",")[0]?.trim() || undefined;

/**
 * Decides the `x-forwarded-*` headers. The edge is the public entry point, so by default it
 * trusts none of the client's forwarding headers: it drops them and states what it saw. With
 * `trustProxy` (one TLS terminator in front), it keeps the terminator's host and proto,
 * appends the peer to `x-forwarded-for`, and counts the last address the terminator added.
 */
export function resolveForwarding(
  url: URL,
  headers: Headers,
  clientIp: string | undefined,
  trustProxy: boolean,
): Forwarding {
  const peer = clientIp ?? "";
  const ownProto = url.protocol.replace(/:$/, "");
  if (trustProxy) {
    const proto = firstValue(headers.get("x-forwarded-proto")) ?? ownProto;
    const host = firstValue(headers.get("x-forwarded-host")) ?? url.host;
    const chain = headers.get("x-forwarded-for")?.trim();
    const last = chain?.split(",").at(-1)?.trim();
    const set: Record<string, string> = { "x-forwarded-host": host, "x-forwarded-proto": proto };
    if (chain || peer) set["x-forwarded-for"] = [chain, peer].filter(Boolean).join(", ");
    return { clientKey: last || peer || "unknown", requestOrigin: `${proto}://${host}`, remove: [], set };
  }
  const remove = ["forwarded", "x-real-ip"];
  headers.forEach((_value, name) => {
    if (name.startsWith("x-forwarded-")) remove.push(name);
  });
  const set: Record<string, string> = { "x-forwarded-host": url.host, "x-forwarded-proto": ownProto };
  if (peer) set["x-forwarded-for"] = peer;
  return { clientKey: peer || "unknown", requestOrigin: url.origin, remove, set };
}

/** Applies a forwarding decision to a header set in place. */
export function applyForwarding(headers: Headers, forwarding: Forwarding): Headers {
  for (const name of forwarding.remove) headers.delete(name);
  for (const [name, value] of Object.entries(forwarding.set)) headers.set(name, value);
  return headers;
}
