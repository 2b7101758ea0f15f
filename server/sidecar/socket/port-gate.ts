/**
 * The sidecar's port answers only what the edge vouched for. A session on the same machine can
 * reach 127.0.0.1:CONDUIT_SIDECAR_PORT directly, past the edge's Host, Origin, cookie and
 * rate-limit checks: every Socket.IO request (handshake, polling, WebSocket upgrade) and every
 * other path needs the edge's `x-conduit-edge` header (server/shared/edge-vouch). Two paths are
 * open to anyone because they are for tools that are not the edge: `/healthz` (a bare
 * `{ ok: true }` without the vouch; which sidecar and what it runs only with it) and `/metrics`
 * (which asks for CONDUIT_METRICS_TOKEN itself).
 */
import type { IncomingMessage, Server as HttpServer, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import type { Logger } from "pino";
import { EDGE_VOUCH_HEADER, isEdgeVouch } from "@/server/shared/edge-vouch";
import { isMetricsPath } from "@/server/shared/metrics-access";

/** Paths answered without the vouch (see above). */
export const OPEN_PATHS: readonly string[] = ["/healthz"];

const vouched = new WeakSet<IncomingMessage>();

/** Whether the edge vouched for this request (the gate checked it on arrival). */
export function wasVouched(req: IncomingMessage): boolean {
  return vouched.has(req);
}

const refusal = JSON.stringify({
  error: { code: "forbidden", message: "Refused: this port answers only requests forwarded by Conduit's edge." },
});

function pathOf(req: IncomingMessage): string {
  return (req.url ?? "").split("?")[0] ?? "";
}

/**
 * Puts the gate in front of every `request` and `upgrade` listener already on `http` (Socket.IO's
 * included: call it after the Socket.IO server is attached). `expected()` is the vouch's value,
 * undefined until it is known (nothing is vouched for then).
 */
export function gatePort(http: HttpServer, expected: () => string | undefined, log: Logger): void {
  const onRequest = http.listeners("request") as ((req: IncomingMessage, res: ServerResponse) => void)[];
  const onUpgrade = http.listeners("upgrade") as ((req: IncomingMessage, socket: Duplex, head: Buffer) => void)[];
  http.removeAllListeners("request");
  http.removeAllListeners("upgrade");

  const admit = (req: IncomingMessage): boolean => {
    const value = expected();
    const header = req.headers[EDGE_VOUCH_HEADER];
    if (value !== undefined && isEdgeVouch(typeof header === "string" ? header : undefined, value)) {
      vouched.add(req);
      return true;
    }
    const path = pathOf(req);
    if (OPEN_PATHS.includes(path) || isMetricsPath(path)) return true;
    log.warn({ method: req.method, path, reason: value === undefined ? "the vouch is not ready" : "no valid x-conduit-edge header" }, "request refused: not through the edge");
    return false;
  };

  http.on("request", (req: IncomingMessage, res: ServerResponse) => {
    if (admit(req)) {
      for (const listener of onRequest) listener.call(http, req, res);
      return;
    }
    res.writeHead(403, { "content-type": "application/json; charset=utf-8", "cache-control": "no-store", connection: "close" });
    res.end(refusal);
  });
  http.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (admit(req)) {
      for (const listener of onUpgrade) listener.call(http, req, socket, head);
      return;
    }
    socket.on("error", () => socket.destroy());
    const body = Buffer.from(refusal);
    socket.end(
      `HTTP/1.1 403 Forbidden\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${refusal}`,
      () => socket.destroy(),
    );
  });
}
