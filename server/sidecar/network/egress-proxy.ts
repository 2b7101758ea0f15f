/**
 * The egress proxy of one session in an `open` or `allowlist` workspace. Its sandbox has no route
 * out (`--unshare-net`); the CLI and its tools reach this proxy through the sandbox's forwarder
 * (HTTPS_PROXY / HTTP_PROXY point at it), and it is the only way out:
 * - `CONNECT host:port` (HTTPS and any TLS): a tunnel;
 * - an absolute-URI request (`GET http://host/path`, plain HTTP): forwarded.
 * What may be reached depends on the policy:
 * - `allowlist`: names on the list (resolved as they are, so a listed name that resolves to a
 *   private address is reached: the owner listed it); every IP literal is refused (a list names
 *   domains; an address would sidestep it);
 * - `open`: any public address. The proxy resolves the name itself, checks every address, and
 *   connects only to the checked ones (`egress-address.ts`): loopback, private, link-local (the
 *   cloud metadata address), multicast and this host's own addresses are refused, by name or literal.
 * Anything else gets 403 with a text that says why. Refusals are logged with the session id and
 * counted. It listens on a Unix socket, never on a TCP port of the host.
 */
import http from "node:http";
import net from "node:net";
import type { LookupFunction } from "node:net";
import { hostAllowed, isIpLiteral } from "@/server/domain/workspace/network-policy";
import { fixedLookup, resolvePublicTarget } from "./egress-address";

/** What the proxy lets through: the allow-list's names, or (open) any public address. */
export type EgressPolicy = { mode: "allowlist"; domains: readonly string[] } | { mode: "open" };

/** Options of {@link startEgressProxy}. */
export interface EgressProxyOptions {
  sessionId: string;
  policy: EgressPolicy;
  /** The Unix socket to listen on (must not exist yet). */
  socketPath: string;
  /** Called once per refused request. */
  log?: (fields: Record<string, unknown>, message: string) => void;
  /** Name resolution for the outgoing connections; default the system's. Tests map test names to a loopback server. */
  lookup?: LookupFunction;
  /**
   * Tests and benches only: addresses the open policy treats as public (a loopback alias that
   * stands in for the internet). Production passes none.
   */
  treatAsPublic?: (address: string) => boolean;
}

/** The running proxy. */
export interface EgressProxy {
  readonly socketPath: string;
  /** Refused requests so far, by host (most recent last). */
  readonly refusals: readonly { host: string; reason: string }[];
  close(): Promise<void>;
}

const hopByHop = new Set(["connection", "keep-alive", "proxy-connection", "proxy-authorization", "proxy-authenticate", "te", "trailer", "transfer-encoding", "upgrade"]);

/** Why `host` may not be reached, or undefined when it may. */
export function egressRefusal(host: string, domains: readonly string[]): string | undefined {
  if (host === "") return "the request names no host";
  if (isIpLiteral(host)) return `${host} is an IP address; this workspace allows only listed domain names`;
  if (!hostAllowed(host, domains)) return `${host} is not on this workspace's network allow-list`;
  return undefined;
}

/** `host:port` of a CONNECT request (IPv6 in brackets), or undefined. */
export function parseAuthority(authority: string): { host: string; port: number } | undefined {
  const match = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(authority);
  if (!match) return undefined;
  const port = Number(match[2]);
  if (port < 1 || port > 65535) return undefined;
  return { host: match[1]!.toLowerCase(), port };
}

function refusalText(reason: string, policy: EgressPolicy): string {
  return policy.mode === "allowlist"
    ? `Conduit refused this connection: ${reason}. A workspace owner can change the list in the workspace's network panel.\n`
    : `Conduit refused this connection: ${reason}. Sessions reach public addresses only, never this host or its private networks.\n`;
}

/** Where one request may go: the addresses to connect to (open), or undefined to resolve as usual (allowlist). */
type Route = { ok: true; lookup: LookupFunction | undefined } | { ok: false; reason: string; status: 403 | 502 };

async function route(host: string, options: EgressProxyOptions): Promise<Route> {
  try {
    return await routeOf(host, options);
  } catch (error) {
    return { ok: false, reason: error instanceof Error ? error.message : String(error), status: 502 };
  }
}

async function routeOf(host: string, options: EgressProxyOptions): Promise<Route> {
  if (options.policy.mode === "allowlist") {
    const reason = egressRefusal(host, options.policy.domains);
    return reason === undefined ? { ok: true, lookup: options.lookup } : { ok: false, reason, status: 403 };
  }
  if (host === "") return { ok: false, reason: "the request names no host", status: 403 };
  const target = await resolvePublicTarget(host, { lookup: options.lookup, allow: options.treatAsPublic });
  if (target.ok) return { ok: true, lookup: fixedLookup(target.addresses) };
  // A name that does not resolve is the client's problem (502), not a refusal of the policy.
  return { ok: false, reason: target.reason, status: target.resolveError ? 502 : 403 };
}

/** Starts the proxy on its Unix socket. */
export async function startEgressProxy(options: EgressProxyOptions): Promise<EgressProxy> {
  const refusals: { host: string; reason: string }[] = [];
  const log = options.log ?? (() => undefined);
  const refuse = (host: string, reason: string) => {
    refusals.push({ host, reason });
    if (refusals.length > 200) refusals.shift();
    log({ sessionId: options.sessionId, host, reason }, "egress proxy refused a connection");
  };
  const sockets = new Set<net.Socket>();

  const server = http.createServer((req, res) => {
    let target: URL;
    try {
      target = new URL(req.url ?? "");
    } catch {
      target = new URL("invalid:");
    }
    if (target.protocol !== "http:") {
      req.resume();
      res.writeHead(400, { "content-type": "text/plain" });
      res.end(refusalText("this proxy forwards absolute http:// URLs and CONNECT tunnels only", options.policy));
      return;
    }
    const host = target.hostname.replace(/^\[|\]$/g, "").toLowerCase();
    req.pause();
    void route(options.policy.mode === "allowlist" ? target.hostname.toLowerCase() : host, options).then((way) => {
      if (!way.ok) {
        if (way.status === 403) refuse(host, way.reason);
        req.resume();
        res.writeHead(way.status, { "content-type": "text/plain" });
        res.end(way.status === 403 ? refusalText(way.reason, options.policy) : `Conduit's egress proxy could not reach ${host}: ${way.reason}\n`);
        return;
      }
      const headers: http.OutgoingHttpHeaders = {};
      for (const [name, value] of Object.entries(req.headers)) if (value !== undefined && !hopByHop.has(name)) headers[name] = value;
      // The Host the check passed, never the client's own: a shared front must not route to another site.
      headers.host = target.host;
      const outgoing = http.request(
        { host, port: Number(target.port || 80), path: `${target.pathname}${target.search}`, method: req.method, headers, ...(way.lookup ? { lookup: way.lookup } : {}) },
        (answer) => {
          const answerHeaders: http.OutgoingHttpHeaders = {};
          for (const [name, value] of Object.entries(answer.headers)) if (value !== undefined && !hopByHop.has(name)) answerHeaders[name] = value;
          res.writeHead(answer.statusCode ?? 502, answerHeaders);
          answer.pipe(res);
        },
      );
      outgoing.on("error", (error) => {
        if (!res.headersSent) {
          res.writeHead(502, { "content-type": "text/plain" });
          res.end(`Conduit's egress proxy could not reach ${host}: ${error.message}\n`);
        } else res.destroy();
      });
      res.on("close", () => {
        if (!res.writableFinished) outgoing.destroy();
      });
      req.pipe(outgoing);
    });
  });

  server.on("connect", (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    sockets.add(client);
    client.on("close", () => sockets.delete(client));
    client.on("error", () => client.destroy());
    const authority = parseAuthority(req.url ?? "");
    if (authority === undefined) {
      refuse(String(req.url), "the CONNECT target is not host:port");
      client.end(`HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\n${refusalText("the CONNECT target is not host:port", options.policy)}`);
      return;
    }
    client.pause();
    void route(authority.host, options).then((way) => {
      if (client.destroyed) return;
      if (!way.ok) {
        if (way.status === 403) {
          refuse(authority.host, way.reason);
          client.end(`HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\n${refusalText(way.reason, options.policy)}`);
        } else {
          client.end(`HTTP/1.1 502 Bad Gateway\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\nConduit's egress proxy could not reach ${authority.host}: ${way.reason}\n`);
        }
        return;
      }
      const upstream = net.connect({ host: authority.host.replace(/^\[|\]$/g, ""), port: authority.port, ...(way.lookup ? { lookup: way.lookup } : {}) });
      sockets.add(upstream);
      upstream.on("close", () => sockets.delete(upstream));
      let established = false;
      upstream.once("connect", () => {
        established = true;
        client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
        if (head.length > 0) upstream.write(head);
        upstream.setNoDelay(true);
        client.setNoDelay(true);
        upstream.pipe(client).pipe(upstream);
        client.resume();
      });
      upstream.on("error", (error) => {
        if (!established) {
          client.end(`HTTP/1.1 502 Bad Gateway\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\nConduit's egress proxy could not reach ${authority.host}: ${error.message}\n`);
        }
        client.destroy();
      });
      client.on("close", () => upstream.destroy());
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.socketPath, () => {
      server.off("error", reject);
      resolve();
    });
  });

  return {
    socketPath: options.socketPath,
    refusals,
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
