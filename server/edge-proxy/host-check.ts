// Which Host the edge answers to. Web-standard only: Deno runs it unchanged.
//
// A DNS-rebinding page (evil.example, re-resolved to this machine) reaches the edge with its own
// name in `Host`: its requests are "same-origin" to the browser, so the Origin checks cannot
// tell them apart. Only the name the browser used can, so the edge refuses every name but the
// public URL's, and the loopback names at the same port (an operator on the machine). Loopback
// names cannot be rebound: a page served from elsewhere never sends them.

/** The names an operator on the machine may use instead of the public one. */
const LOOPBACK_HOSTNAMES = ["127.0.0.1", "localhost", "[::1]"] as const;

export interface HostCheckOptions {
  /** The public URL (`CONDUIT_PUBLIC_URL`). */
  publicOrigin: string;
  /** The port the edge listens on, when it differs from the public one (a TLS terminator in front): loopback names at it are accepted too. */
  listenPort?: number;
  /** A trusted proxy in front: its `X-Forwarded-Host`, when present, is the name the browser used. */
  trustProxy: boolean;
}

/** A refused request's name, for the log; null when the request may pass. */
export type HostCheck = (req: Request, url: URL) => { host: string } | null;

/** A Host value's name (lowercased) and port ("" when absent), or null when it is not a plain `name[:port]`. */
export function parseHost(host: string): { hostname: string; port: string } | null {
  const match = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::(\d{1,5}))?$/i.exec(host.trim());
  return match ? { hostname: match[1]!.toLowerCase(), port: match[2] ?? "" } : null;
}

export function createHostCheck(options: HostCheckOptions): HostCheck {
  const publicUrl = new URL(options.publicOrigin);
  const defaultPort = publicUrl.protocol === "https:" ? "443" : "80";
  const publicPort = publicUrl.port || defaultPort;
  // `name:port`, and the bare `name` where that port is the one a browser leaves out.
  const allowed = new Set<string>();
  const allow = (hostname: string, port: string, bare: boolean) => {
    allowed.add(`${hostname}:${port}`);
    if (bare) allowed.add(hostname);
  };
  allow(publicUrl.hostname.toLowerCase(), publicPort, publicPort === defaultPort);
  for (const name of LOOPBACK_HOSTNAMES) {
    allow(name, publicPort, publicPort === defaultPort);
    if (options.listenPort !== undefined) allow(name, String(options.listenPort), options.listenPort === 80);
  }

  return (req, url) => {
    const forwarded = options.trustProxy ? req.headers.get("x-forwarded-host")?.split(",")[0]?.trim() : undefined;
    // No Host header at all (HTTP/2's :authority): the runtime built the URL from the authority.
    const host = forwarded || (req.headers.get("host") ?? url.host);
    const parsed = parseHost(host);
    const key = parsed && (parsed.port ? `${parsed.hostname}:${parsed.port}` : parsed.hostname);
    return key !== null && allowed.has(key) ? null : { host: host.slice(0, 200) };
  };
}

/** The answer to a request for another name: short, plain, and never forwarded. */
export function misdirectedResponse(): Response {
  return new Response("421 Misdirected Request: this server answers only for Conduit's public address.\n", {
    status: 421,
    headers: { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" },
  });
}
