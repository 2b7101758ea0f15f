// @ts-nocheck — Deno-only entry (uses the `Deno` global); tsc and the Node build skip it.
// Run: deno run --unstable-sloppy-imports --allow-net --allow-env --allow-read server/edge-proxy/deno.ts
// (sloppy imports: the shared modules import each other without `.ts`, as the Node side needs).
// The same settings and defaults as main.ts: both parse the environment with server/env.
import { EnvError, parseEnv, publicUrlOf, sidecarUpstreamsOf, webUpstreamOf } from "../env/env.ts";
import { deriveEdgeVouch } from "../shared/edge-vouch.ts";
import { unavailableResponse } from "./edge-responses.ts";
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
  listenPort: env.PORT,
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

/** How long the upstream may take to accept the bridged WebSocket. */
const UPSTREAM_CONNECT_TIMEOUT_MS = 10_000;

async function bridge(req: Request, clientIp: string): Promise<Response> {
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

  // The upstream first: a browser whose upgrade is accepted and then closed before Engine.IO's
  // open packet waits for its whole connect timeout (20 s) before it retries, while a refused
  // upgrade (502, as the Node adapter answers) makes it retry at once.
  const upstream = new WebSocket(target, { headers, protocols: protocol });
  upstream.binaryType = "arraybuffer";
  const early = [];
  upstream.onmessage = (e) => early.push(e.data);
  const opened = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), UPSTREAM_CONNECT_TIMEOUT_MS);
    upstream.onopen = () => (clearTimeout(timer), resolve(true));
    upstream.onerror = () => (clearTimeout(timer), resolve(false));
    upstream.onclose = () => (clearTimeout(timer), resolve(false));
  });
  if (!opened) {
    log({ level: "error", event: "upgrade_failed", path: url.pathname, upstream: decision.upstream, reason: target.replace(/\?.*$/, "") });
    if (upstream.readyState <= WebSocket.OPEN) upstream.close();
    return unavailableResponse(decision.upstream, true, false);
  }
  let upgraded;
  try {
    upgraded = Deno.upgradeWebSocket(req, protocol ? { protocol } : {});
  } catch {
    // the browser went away while the upstream connected
    upstream.close();
    return new Response(null, { status: 499 });
  }
  const { socket: client, response } = upgraded;

  let open = byTarget.get(decision.target);
  if (!open) byTarget.set(decision.target, (open = new Set()));
  // A close asked for before the browser's side is open would be lost: it is done on open.
  let closeOnOpen: [number, string] | undefined;
  const closeClient = (code: number, reason: string) => {
    if (client.readyState === WebSocket.CONNECTING) closeOnOpen ??= [code, reason];
    else if (client.readyState === WebSocket.OPEN) client.close(code, reason);
  };
  client.onopen = () => {
    for (const message of early.splice(0)) client.send(message);
    if (closeOnOpen) client.close(...closeOnOpen);
  };
  const pair = {
    close() {
      closeClient(1012, "session server out of rotation");
      if (upstream.readyState <= WebSocket.OPEN) upstream.close();
    },
  };
  open.add(pair);
  const forget = () => open.delete(pair);
  upstream.onmessage = (e) => (client.readyState === WebSocket.OPEN ? client.send(e.data) : early.push(e.data));
  upstream.onclose = (e) => {
    forget();
    // 1005 and 1006 only describe a close, they cannot be sent: the browser gets a plain one.
    closeClient(e.code === 1005 || e.code === 1006 ? 1000 : e.code, e.reason);
  };
  upstream.onerror = () => {
    log({ level: "error", event: "upgrade_failed", path: url.pathname, upstream: decision.upstream });
    closeClient(1011, "upstream unavailable");
  };
  client.onmessage = (e) => upstream.readyState === WebSocket.OPEN && upstream.send(e.data);
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
