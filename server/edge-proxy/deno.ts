// @ts-nocheck — Deno-only entry (uses the `Deno` global); tsc and the Node build skip it.
// Run: deno run --unstable-sloppy-imports --allow-net --allow-env --allow-read server/edge-proxy/deno.ts
// (sloppy imports: the shared modules import each other without `.ts`, as the Node side needs).
// The same settings and defaults as main.ts: both parse the environment with server/env.
import { EnvError, parseEnv, publicUrlOf, sidecarUpstreamsOf, webUpstreamOf } from "../env/env.ts";
import { deriveEdgeVouch } from "../shared/edge-vouch.ts";
import { createEdgeHandler } from "./handler.ts";

let env;
try {
  env = parseEnv(Deno.env.toObject());
} catch (err) {
  console.error(`edge: ${err instanceof EnvError ? err.message : String(err)}`);
  Deno.exit(1);
}
const port = env.PORT;
const hostname = env.HOST;

const log = (entry) => console.log(JSON.stringify({ time: new Date().toISOString(), process: "edge", ...entry }));
const handler = createEdgeHandler({
  nextOrigin: webUpstreamOf(env),
  sidecarOrigin: sidecarUpstreamsOf(env),
  publicOrigin: publicUrlOf(env),
  fetch: globalThis.fetch,
  log,
  rateLimit: env.CONDUIT_EDGE_RATE_LIMIT === "on" ? {} : false,
  trustProxy: env.CONDUIT_TRUST_PROXY === "on",
  dev: env.NODE_ENV === "development",
  ...(env.CONDUIT_METRICS_TOKEN ? { metricsToken: env.CONDUIT_METRICS_TOKEN } : {}),
  ...(env.NEXTAUTH_SECRET ? { edgeVouch: await deriveEdgeVouch(env.NEXTAUTH_SECRET) } : {}),
});

// Bridged WebSockets by upstream: when a sidecar is taken out of the rotation (failed health
// checks), its browsers get a clean close (1012, "service restart") and reconnect elsewhere.
const byTarget = new Map();
handler.sidecars.onDidChange((origin, healthy) => {
  if (healthy) return;
  for (const pair of byTarget.get(origin) ?? []) pair.close();
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
  let open = byTarget.get(decision.target);
  if (!open) byTarget.set(decision.target, (open = new Set()));
  const pair = {
    close() {
      if (client.readyState <= WebSocket.OPEN) client.close(1012, "session server out of rotation");
      if (upstream.readyState <= WebSocket.OPEN) upstream.close();
    },
  };
  open.add(pair);
  const forget = () => open.delete(pair);
  const pending = [];
  upstream.onopen = () => pending.splice(0).forEach((m) => upstream.send(m));
  upstream.onmessage = (e) => client.readyState === WebSocket.OPEN && client.send(e.data);
  upstream.onclose = (e) => {
    forget();
    if (client.readyState <= WebSocket.OPEN) client.close(e.code === 1005 || e.code === 1006 ? 1000 : e.code, e.reason);
  };
  upstream.onerror = () => {
    log({ level: "error", event: "upgrade_failed", path: url.pathname, upstream: decision.upstream });
    if (client.readyState <= WebSocket.OPEN) client.close(1011, "upstream unavailable");
  };
  client.onmessage = (e) => (upstream.readyState === WebSocket.OPEN ? upstream.send(e.data) : pending.push(e.data));
  client.onclose = () => {
    forget();
    if (upstream.readyState <= WebSocket.OPEN) upstream.close();
  };
  return response;
}

const server = Deno.serve({ port, hostname }, (req, info) => {
  const clientIp = info.remoteAddr.hostname;
  if (req.headers.get("upgrade")?.toLowerCase() === "websocket") return bridge(req, clientIp);
  return handler(req, { clientIp });
});

for (const signal of ["SIGINT", "SIGTERM"]) {
  Deno.addSignalListener(signal, () => {
    void Promise.all([server.shutdown(), handler.close()]).finally(() => Deno.exit(0));
  });
}
