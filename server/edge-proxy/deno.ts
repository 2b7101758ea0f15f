// @ts-nocheck — Deno-only entry (uses the `Deno` global); tsc and the Node build skip it.
// Run: deno run --unstable-sloppy-imports --allow-net --allow-env server/edge-proxy/deno.ts
// (sloppy imports: the shared modules import each other without `.ts`, as the Node side needs).
// Same env vars as main.ts. Unverified here: Deno is not installed in this project.
import { createEdgeHandler } from "./handler.ts";

const port = Number(Deno.env.get("PORT") ?? 3000);
const hostname = Deno.env.get("HOST") ?? "127.0.0.1";
const nextPort = Deno.env.get("CONDUIT_NEXT_PORT");
const sidecarPort = Deno.env.get("CONDUIT_SIDECAR_PORT");
if (!nextPort || !sidecarPort) {
  console.error("edge: CONDUIT_NEXT_PORT and CONDUIT_SIDECAR_PORT are required");
  Deno.exit(1);
}

const log = (entry) => console.log(JSON.stringify({ time: new Date().toISOString(), process: "edge", ...entry }));
const handler = createEdgeHandler({
  nextOrigin: `http://127.0.0.1:${nextPort}`,
  sidecarOrigin: `http://127.0.0.1:${sidecarPort}`,
  publicOrigin: Deno.env.get("CONDUIT_PUBLIC_URL") ?? `http://localhost:${port}`,
  fetch: globalThis.fetch,
  log,
  rateLimit: Deno.env.get("CONDUIT_EDGE_RATE_LIMIT") === "off" ? false : {},
  trustProxy: Deno.env.get("CONDUIT_TRUST_PROXY") === "on",
  dev: Deno.env.get("NODE_ENV") === "development",
});

// Headers the upstream needs to see on its own handshake: the bridge opens a new WebSocket,
// so nothing is carried over unless copied here.
const BRIDGED_HEADERS = ["cookie", "origin", "user-agent", "accept-language"];

function bridge(req: Request, clientIp: string): Response | Promise<Response> {
  const decision = handler.upgrade(req, { clientIp });
  if (!decision.ok) return decision.response;
  const url = new URL(req.url);
  const target = decision.target.replace(/^http/, "ws") + url.pathname + url.search;
  // Read every header BEFORE upgradeWebSocket: afterwards the request is closed and reading
  // it throws "Request closed" (and the server stopped accepting, in the probe).
  const headers: Record<string, string> = { ...decision.forwarding.set };
  for (const name of BRIDGED_HEADERS) {
    const value = req.headers.get(name);
    if (value !== null) headers[name] = value;
  }
  const protocol = req.headers.get("sec-websocket-protocol") ?? undefined;

  const { socket: client, response } = Deno.upgradeWebSocket(req, protocol ? { protocol } : {});
  const upstream = new WebSocket(target, { headers, protocols: protocol });
  upstream.binaryType = "arraybuffer";
  const pending = [];
  upstream.onopen = () => pending.splice(0).forEach((m) => upstream.send(m));
  upstream.onmessage = (e) => client.readyState === WebSocket.OPEN && client.send(e.data);
  upstream.onclose = (e) =>
    client.readyState <= WebSocket.OPEN && client.close(e.code === 1005 ? 1000 : e.code, e.reason);
  upstream.onerror = () => {
    log({ level: "error", event: "upgrade_failed", path: url.pathname, upstream: decision.upstream });
    if (client.readyState <= WebSocket.OPEN) client.close(1011, "upstream unavailable");
  };
  client.onmessage = (e) => (upstream.readyState === WebSocket.OPEN ? upstream.send(e.data) : pending.push(e.data));
  client.onclose = () => upstream.readyState <= WebSocket.OPEN && upstream.close();
  return response;
}

Deno.serve({ port, hostname }, (req, info) => {
  const clientIp = info.remoteAddr.hostname;
  if (req.headers.get("upgrade")?.toLowerCase() === "websocket") return bridge(req, clientIp);
  return handler(req, { clientIp });
});
