import { createServer, STATUS_CODES, type IncomingMessage } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { Duplex } from "node:stream";
import { getRequestListener, type HttpBindings } from "@hono/node-server";
import httpProxy from "http-proxy";
import { ErrorCode } from "../shared/errors/app-error";
import { describeError, type EdgeLog } from "./edge-log";
import { jsonErrorResponse, unavailableMessage, Upstream } from "./edge-responses";
import type { EdgeHandler } from "./handler";

/** How long an idle keep-alive connection to the edge stays open (ms). */
export const idleConnectionMs = 65_000;

export interface EdgeServerOptions {
  /** 0 picks a free port (tests). */
  port: number;
  host: string;
  handler: EdgeHandler;
  log?: EdgeLog;
  /** How long `close()` lets in-flight HTTP requests finish before cutting them. */
  closeGraceMs?: number;
}

export interface EdgeServer {
  /** The port actually bound. */
  port: number;
  /** Stops listening, drops WebSockets and idle connections, then in-flight ones after the grace period. */
  close(): Promise<void>;
}

/** `::ffff:127.0.0.1` (an IPv4 peer on a dual-stack socket) is `127.0.0.1` to a person and a bucket. */
export function normalizeIp(address: string | undefined): string | undefined {
  return address?.startsWith("::ffff:") ? address.slice("::ffff:".length) : address;
}

/** The parts of an upgrade request the handler's admission check reads, as a web `Request`. */
function toWebRequest(req: IncomingMessage): Request {
  if (!req.url?.startsWith("/")) throw new Error("upgrade request target is not a path");
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(", ") : value);
  }
  return new Request(`http://${req.headers.host ?? "localhost"}${req.url}`, { headers });
}

/** A complete HTTP/1.1 response for a socket nobody will upgrade, ending with the connection. */
function rawResponse(status: number, headers: Iterable<[string, string]>, body: string): Buffer {
  const payload = Buffer.from(body);
  const lines = [`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ""}`];
  for (const [name, value] of headers) lines.push(`${name}: ${value}`);
  lines.push(`content-length: ${payload.length}`, "connection: close", "", "");
  return Buffer.concat([Buffer.from(lines.join("\r\n")), payload]);
}

function endWith(socket: Duplex, bytes: Buffer): void {
  if (!socket.destroyed) socket.end(bytes, () => socket.destroy());
}

async function writeRefusal(socket: Duplex, res: Response): Promise<void> {
  endWith(socket, rawResponse(res.status, res.headers, await res.text()));
}

const pathOf = (url: string | undefined) => (url ?? "").split("?")[0];

/**
 * Serves the edge handler on `node:http`. Plain requests go through `@hono/node-server`'s
 * listener (Request/Response bridging, the peer address as `clientIp`). WebSocket upgrades
 * cannot pass through `fetch`, so they are admitted by `handler.upgrade` (same Origin,
 * cookie and rate-limit rules, same buckets) and then piped raw by `http-proxy`, which
 * keeps every handshake header, the session cookie included.
 */
export async function startEdgeServer(options: EdgeServerOptions): Promise<EdgeServer> {
  const { handler } = options;
  const log: EdgeLog = options.log ?? (() => {});
  const graceMs = options.closeGraceMs ?? 2_000;

  const listener = getRequestListener(
    (req, env) => handler(req, { clientIp: normalizeIp((env as HttpBindings).incoming.socket.remoteAddress) }),
    {
      // Leave the process's global Request/Response alone; the handler works with either.
      overrideGlobalObjects: false,
      errorHandler: (err) => {
        log({ level: "error", event: "handler_failed", reason: describeError(err) });
        return jsonErrorResponse(500, ErrorCode.internal, "Something went wrong on the server.");
      },
    },
  );
  const server = createServer(listener);
  // Idle keep-alive connections stay open longer than Node's 5 s: a client that reuses one just
  // as the server closes it gets a reset with no answer, and only some retry (a test's POST
  // through Playwright's request context did not). The same margin as common load balancers.
  server.keepAliveTimeout = idleConnectionMs;
  server.headersTimeout = idleConnectionMs + 1_000;

  // Upgraded sockets leave the HTTP server's bookkeeping, so close() must find them here.
  const sockets = new Set<Duplex>();
  const track = (socket: Duplex) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  };

  // WebSockets by the upstream they were piped to: when the edge takes a sidecar out of the
  // rotation (failed health checks), they are closed so the browsers reconnect to another one.
  const byTarget = new Map<string, Set<Duplex>>();
  const stopWatching = handler.sidecars.onDidChange((origin, healthy) => {
    if (healthy) return;
    for (const socket of byTarget.get(origin) ?? []) socket.destroy();
  });

  const proxy = httpProxy.createProxyServer({ ws: true, xfwd: false });
  proxy.on("open", (upstreamSocket: Socket) => track(upstreamSocket));
  function failUpgrade(err: Error, req: IncomingMessage, socket: Duplex, upstream: Upstream): void {
    log({ level: "error", event: "upgrade_failed", path: pathOf(req.url), upstream, reason: describeError(err) });
    if (socket.destroyed) return;
    // Nothing written yet: the upstream refused the connection, so say so in HTTP. After the
    // 101 the bytes belong to the WebSocket, and only closing the socket is clean.
    if ((socket as Socket).bytesWritten === 0) {
      // Synchronously: http-proxy ends the socket right after this callback returns.
      const body = JSON.stringify({
        error: { code: ErrorCode.unavailable, message: unavailableMessage(upstream, false) },
      });
      endWith(socket, rawResponse(502, [["content-type", "application/json; charset=utf-8"]], body));
    } else {
      socket.destroy();
    }
  }
  // Every proxy.ws call passes its own callback; this only keeps a stray error from crashing.
  proxy.on("error", (err, req, res) => failUpgrade(err, req, res as Duplex, Upstream.sidecar));

  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    track(socket);
    socket.on("error", () => socket.destroy());
    let request: Request;
    try {
      request = toWebRequest(req);
    } catch {
      void writeRefusal(socket, jsonErrorResponse(400, ErrorCode.invalidPayload, "Malformed upgrade request."));
      return;
    }
    const decision = handler.upgrade(request, { clientIp: normalizeIp(req.socket.remoteAddress) });
    if (!decision.ok) {
      void writeRefusal(socket, decision.response);
      return;
    }
    for (const name of decision.forwarding.remove) delete req.headers[name];
    Object.assign(req.headers, decision.forwarding.set);
    const { upstream, target } = decision;
    let open = byTarget.get(target);
    if (!open) byTarget.set(target, (open = new Set()));
    const connections = open;
    connections.add(socket);
    socket.once("close", () => connections.delete(socket));
    proxy.ws(req, socket, head, { target: decision.target }, (err) => failUpgrade(err, req, socket, upstream));
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      resolve();
    });
  });

  let closing: Promise<void> | undefined;
  return {
    port: (server.address() as AddressInfo).port,
    close() {
      closing ??= new Promise<void>((resolve) => {
        const timer = setTimeout(() => server.closeAllConnections(), graceMs);
        stopWatching();
        server.close(() => {
          clearTimeout(timer);
          resolve();
        });
        server.closeIdleConnections();
        for (const socket of sockets) socket.destroy();
      });
      return closing;
    },
  };
}
