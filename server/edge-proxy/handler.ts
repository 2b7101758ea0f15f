// Web-standard only (Request, Response, Headers, fetch, AbortSignal, setTimeout): no
// `node:*` import anywhere in this module's graph, so Deno runs it unchanged.
import { EDGE_CLIENT_IP_HEADER, EDGE_VOUCH_HEADER } from "../shared/edge-vouch";
import { ErrorCode } from "../shared/errors/app-error";
import { compressBody, webCompression, type CompressionSetup } from "./compression";
import { describeError, type EdgeLog } from "./edge-log";
import { createEdgeMetrics, METRICS_CONTENT_TYPE, renderSidecarHealth, type EdgeMetrics } from "./edge-metrics";
import { jsonErrorResponse, unavailableResponse, Upstream, wantsJson } from "./edge-responses";
import { applyForwarding, resolveForwarding, type ClientInfo, type Forwarding } from "./forwarding";
import { stripHopByHop } from "./hop-by-hop";
import { createHostCheck, misdirectedResponse } from "./host-check";
import { createRequestGate, DEFAULT_RATE_LIMITS, SOCKET_PATH_PREFIX, type RateLimitSettings } from "./request-gate";
import { applySecurityHeaders, buildContentSecurityPolicy } from "./security-headers";
import { SESSION_COOKIE_NAMES } from "./session-cookie";
import { SidecarPool, type HealthCheckSettings } from "./sidecar-pool";
import { readStickyId, stickyCookieFor } from "./sidecar-routing";
import { isMetricsPath, mayReadMetrics, METRICS_PATH } from "../shared/metrics-access";

/** Answered by the edge itself, so a supervisor can tell "edge up" from "app up". */
export const HEALTH_PATH = "/healthz";

export interface EdgeHandlerDeps {
  /** Where Next.js listens, e.g. `http://127.0.0.1:3001`. */
  nextOrigin: string;
  /**
   * Where the sidecars' Socket.IO servers listen, e.g. `http://127.0.0.1:3002`, or several:
   * socket traffic is then spread over the healthy ones and each browser kept on its own.
   */
  sidecarOrigin: string | readonly string[];
  /** Health checks of the sidecars when there are several (default `DEFAULT_HEALTH_CHECK`); `false`: none. */
  healthCheck?: Partial<HealthCheckSettings> | false;
  /**
   * The origin people type into the browser, e.g. `https://conduit.example.com`. Its host (and
   * the loopback names at its port) is the only `Host` the edge answers to: any other gets 421.
   */
  publicOrigin: string;
  /** The port the edge listens on (`PORT`): loopback names at it are accepted as `Host` too. */
  listenPort?: number;
  fetch: typeof fetch;
  now?: () => number;
  log?: EdgeLog;
  /** Merged over `DEFAULT_RATE_LIMITS`; `false` turns rate limiting off. */
  rateLimit?: Partial<RateLimitSettings> | false;
  sessionCookieNames?: readonly string[];
  /** Trust `x-forwarded-*` from the peer: only when a TLS terminator sits in front. */
  trustProxy?: boolean;
  /** Next runs in development mode (its CSP then needs `'unsafe-eval'`). */
  dev?: boolean;
  /** Replaces the built Content-Security-Policy entirely. */
  contentSecurityPolicy?: string;
  /** How long an upstream may take to send its response headers (not its whole body). */
  upstreamTimeoutMs?: number;
  /**
   * `deriveEdgeVouch(NEXTAUTH_SECRET)`: sent to the web app and the sidecar as `x-conduit-edge`
   * on everything forwarded; their ports answer nothing without it (server/shared/edge-vouch).
   */
  edgeVouch?: string;
  /**
   * Compress JS, CSS, HTML, JSON and SVG for browsers that accept it (default: the runtime's
   * `CompressionStream`, br then gzip where it has them; Node's main.ts passes zlib). `false`
   * turns it off.
   */
  compression?: false | CompressionSetup;
  /** `CONDUIT_METRICS_TOKEN`: lets `/metrics` be read from outside with `Authorization: Bearer`. */
  metricsToken?: string;
  /** Where request counts and latency go; default a fresh set. */
  metrics?: EdgeMetrics;
}

/** What to do with a WebSocket upgrade that the runtime adapter forwards itself. */
export type UpgradeDecision =
  | {
      ok: true;
      upstream: Upstream;
      /** The origin to connect to: the web app, or the sidecar chosen for this browser. */
      target: string;
      forwarding: Forwarding;
    }
  | { ok: false; response: Response };

/**
 * The edge proxy as a `fetch`-style function, plus the admission check for WebSocket
 * upgrades (which `fetch` cannot carry), so that both share one set of rate-limit buckets.
 */
export interface EdgeHandler {
  (req: Request, client?: ClientInfo): Promise<Response>;
  upgrade(req: Request, client?: ClientInfo): UpgradeDecision;
  /** The sidecars and their health; adapters close WebSockets to one that goes out. */
  sidecars: SidecarPool;
  /** Stops the health checks. */
  close(): Promise<void>;
}

const DEFAULT_UPSTREAM_TIMEOUT_MS = 60_000;

/**
 * Builds the edge: `/socket.io/*` to the sidecar, everything else to Next.js, `GET /healthz`
 * answered here. Before forwarding it refuses a `Host` that is not the public one (421),
 * rate-limited logins and handshakes, socket traffic with a foreign Origin or no session
 * cookie, and cross-site requests that change state; after, it sets security headers.
 */
export function createEdgeHandler(deps: EdgeHandlerDeps): EdgeHandler {
  const nextOrigin = new URL(deps.nextOrigin).origin;
  const sidecars = new SidecarPool({
    origins: typeof deps.sidecarOrigin === "string" ? [deps.sidecarOrigin] : deps.sidecarOrigin,
    fetch: deps.fetch,
    ...(deps.log ? { log: deps.log } : {}),
    ...(deps.healthCheck !== undefined ? { healthCheck: deps.healthCheck } : {}),
  });
  const publicOrigin = new URL(deps.publicOrigin).origin;
  const secureCookies = new URL(deps.publicOrigin).protocol === "https:";
  const now = deps.now ?? Date.now;
  const log: EdgeLog = deps.log ?? (() => {});
  const trustProxy = deps.trustProxy ?? false;
  const timeoutMs = deps.upstreamTimeoutMs ?? DEFAULT_UPSTREAM_TIMEOUT_MS;
  const metrics = deps.metrics ?? createEdgeMetrics();
  const compression: CompressionSetup =
    deps.compression === false ? { codings: [], compressor: () => new TransformStream() } : (deps.compression ?? webCompression());
  const gate = createRequestGate({
    publicOrigin,
    sessionCookieNames: deps.sessionCookieNames ?? SESSION_COOKIE_NAMES,
    rateLimit: deps.rateLimit === false ? false : { ...DEFAULT_RATE_LIMITS, ...deps.rateLimit },
    now,
    log,
  });

  const hostCheck = createHostCheck({
    publicOrigin,
    trustProxy,
    ...(deps.listenPort !== undefined ? { listenPort: deps.listenPort } : {}),
  });

  /** 421 for a request made to another name (DNS rebinding), logged; null when the name is ours. */
  function misdirected(req: Request, url: URL, forwarding: Forwarding): Response | null {
    const refused = hostCheck(req, url);
    if (!refused) return null;
    log({
      level: "warn",
      event: "host_refused",
      method: req.method,
      path: url.pathname,
      clientIp: forwarding.clientKey,
      status: 421,
      reason: `Host ${JSON.stringify(refused.host)} is not the public address`,
    });
    return misdirectedResponse();
  }

  const upstreamFor = (url: URL): Upstream =>
    url.pathname.startsWith(SOCKET_PATH_PREFIX) ? Upstream.sidecar : Upstream.web;

  /**
   * What the edge saw, for the upstream: the vouch and the client's address (the key the edge's
   * own rate limits use) come only from here, never from outside.
   */
  function forwardingFor(url: URL, req: Request, client: ClientInfo): Forwarding {
    const forwarding = resolveForwarding(url, req.headers, client.clientIp, trustProxy);
    forwarding.remove.push(EDGE_VOUCH_HEADER, EDGE_CLIENT_IP_HEADER);
    forwarding.set[EDGE_CLIENT_IP_HEADER] = forwarding.clientKey;
    if (deps.edgeVouch) forwarding.set[EDGE_VOUCH_HEADER] = deps.edgeVouch;
    return forwarding;
  }

  function secure(res: Response, forwarding: Forwarding): Response {
    const csp =
      deps.contentSecurityPolicy ??
      buildContentSecurityPolicy({ dev: deps.dev ?? false, origins: [publicOrigin, forwarding.requestOrigin] });
    applySecurityHeaders(res.headers, csp);
    return res;
  }

  async function forward(req: Request, url: URL, forwarding: Forwarding): Promise<Response> {
    const upstream = upstreamFor(url);
    const sidecar = upstream === Upstream.sidecar ? sidecars.choose(readStickyId(req.headers.get("cookie"))) : undefined;
    // Concatenate, never resolve: `new URL("//evil.example/x", origin)` would leave our host.
    const target = (sidecar ? sidecar.origin : nextOrigin) + url.pathname + url.search;
    const headers = stripHopByHop(new Headers(req.headers));
    // fetch sets both from the target and the body it streams.
    headers.delete("host");
    headers.delete("content-length");
    // fetch decodes whatever the upstream encodes, so its compression would be wasted work: the
    // edge compresses once, for the browser, below.
    headers.set("accept-encoding", "identity");
    applyForwarding(headers, forwarding);
    const hasBody = req.method !== "GET" && req.method !== "HEAD" && req.body !== null;

    // The timeout covers waiting for response headers only: Socket.IO long-polls and
    // streamed pages may then take as long as they need.
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(), timeoutMs);
    let res: Response;
    try {
      res = await deps.fetch(target, {
        method: req.method,
        headers,
        body: hasBody ? req.body : undefined,
        redirect: "manual",
        // A sidecar taken out of the rotation ends its pending long-polls: the client reconnects elsewhere.
        signal: AbortSignal.any([req.signal, timeout.signal, ...(sidecar ? [sidecars.signalOf(sidecar.origin)] : [])]),
        ...(hasBody ? { duplex: "half" } : {}),
      } as RequestInit);
    } catch (err) {
      const entry = { method: req.method, path: url.pathname, clientIp: forwarding.clientKey, upstream };
      if (req.signal.aborted) {
        log({ ...entry, level: "info", event: "client_aborted" });
        return new Response(null, { status: 499 });
      }
      const timedOut = timeout.signal.aborted;
      log({
        ...entry,
        level: "error",
        event: timedOut ? "upstream_timeout" : "upstream_unavailable",
        status: 502,
        reason: describeError(err),
      });
      return secure(unavailableResponse(upstream, wantsJson(url, req.headers.get("accept")), timedOut), forwarding);
    } finally {
      clearTimeout(timer);
    }

    const out = stripHopByHop(new Headers(res.headers));
    // fetch has already decoded the body, so the upstream's encoding and length are wrong now.
    const upstreamEncoding = out.get("content-encoding")?.trim().toLowerCase();
    out.delete("content-encoding");
    out.delete("content-length");
    out.delete("set-cookie");
    for (const cookie of res.headers.getSetCookie()) out.append("set-cookie", cookie);
    if (sidecar?.setCookie) out.append("set-cookie", stickyCookieFor(sidecar.id, secureCookies));
    // Length as the upstream stated it (fetch keeps the header) decides "too small to compress".
    const statedLength = res.headers.get("content-length");
    if (statedLength !== null && !upstreamEncoding) out.set("content-length", statedLength);
    const body = compressBody(
      {
        method: req.method,
        requestHeaders: req.headers,
        status: res.status,
        headers: out,
        upstreamEncoded: upstreamEncoding !== undefined && upstreamEncoding !== "identity",
        stream: upstream === Upstream.sidecar,
      },
      res.body,
      compression,
    );
    out.delete("content-length");
    return secure(new Response(body, { status: res.status, statusText: res.statusText, headers: out }), forwarding);
  }

  function health(req: Request): Response {
    if (req.method !== "GET" && req.method !== "HEAD") {
      const res = jsonErrorResponse(405, ErrorCode.invalidPayload, "Use GET for the health check.");
      res.headers.set("allow", "GET, HEAD");
      return res;
    }
    return new Response(req.method === "HEAD" ? null : JSON.stringify({ ok: true }), {
      status: 200,
      headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" },
    });
  }

  /**
   * `/metrics` is never forwarded (each part answers its own): the edge's figures for the
   * token's holder, 404 for everyone else (a local peer included: a session on this machine is local).
   */
  function metricsResponse(req: Request, url: URL): Response {
    const allowed = mayReadMetrics({ authorization: req.headers.get("authorization"), token: deps.metricsToken });
    if (!allowed || url.pathname !== METRICS_PATH || (req.method !== "GET" && req.method !== "HEAD")) {
      return jsonErrorResponse(404, ErrorCode.notFound, "Not found.");
    }
    return new Response(req.method === "HEAD" ? null : metrics.render() + renderSidecarHealth(sidecars.status()), {
      headers: { "content-type": METRICS_CONTENT_TYPE, "cache-control": "no-store" },
    });
  }

  async function answer(req: Request, url: URL, client: ClientInfo): Promise<{ res: Response; upstream: "web" | "sidecar" | "edge" }> {
    const forwarding = forwardingFor(url, req, client);
    if (url.pathname === HEALTH_PATH) return { res: secure(health(req), forwarding), upstream: "edge" };
    if (isMetricsPath(url.pathname)) return { res: secure(metricsResponse(req, url), forwarding), upstream: "edge" };
    const refused = misdirected(req, url, forwarding) ?? gate(req, url, forwarding);
    if (refused) return { res: secure(refused, forwarding), upstream: "edge" };
    return { res: await forward(req, url, forwarding), upstream: upstreamFor(url) === Upstream.sidecar ? "sidecar" : "web" };
  }

  const handler = async (req: Request, client: ClientInfo = {}): Promise<Response> => {
    const started = now();
    const url = new URL(req.url);
    const { res, upstream } = await answer(req, url, client);
    metrics.observe(upstream, res.status, (now() - started) / 1000);
    return res;
  };

  const upgrade = (req: Request, client: ClientInfo = {}): UpgradeDecision => {
    const url = new URL(req.url);
    const forwarding = forwardingFor(url, req, client);
    const upstream = upstreamFor(url);
    const label = upstream === Upstream.sidecar ? "sidecar" : "web";
    const refused = misdirected(req, url, forwarding) ?? gate(req, url, forwarding);
    metrics.upgrade(label, !refused);
    if (refused) return { ok: false, response: refused };
    // The 101 cannot carry a cookie through the adapters: an upgrade follows the sticky cookie
    // when the browser has one (a polling session moving to WebSocket), else any healthy sidecar.
    const target = upstream === Upstream.sidecar ? sidecars.choose(readStickyId(req.headers.get("cookie"))).origin : nextOrigin;
    return { ok: true, upstream, target, forwarding };
  };

  return Object.assign(handler, { upgrade, sidecars, close: () => sidecars.close() });
}
