/**
 * The credential proxy: the only holder of the operator's Anthropic credential. Each CLI child
 * gets a random per-spawn token as its API key and `ANTHROPIC_BASE_URL` pointing here (loopback);
 * a request carrying a live token gets the real credential swapped in and goes to the upstream
 * (the Anthropic API, a gateway, or the offline demo model), and the answer streams back chunk
 * by chunk as it arrives (SSE: nothing is buffered). A token dies with its process; an unknown
 * or revoked one gets 401 in the API's error shape, so the CLI reports an auth failure.
 *
 * Invariants: the real credential appears in no child's environment, argv or config directory
 * and in no log line (only session ids and counts are logged); requests and bytes are counted
 * per session, also after the token is revoked (for metrics and budgets).
 */
import { randomBytes } from "node:crypto";
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";

/** The operator's credential, as the upstream expects it. */
export interface UpstreamCredential {
  /** Sent as `x-api-key`. */
  apiKey?: string | undefined;
  /** Sent as `Authorization: Bearer …` (gateways, ANTHROPIC_AUTH_TOKEN). */
  authToken?: string | undefined;
}

/** Options of {@link startCredentialProxy}. */
export interface CredentialProxyOptions {
  /** Where requests go: `https://api.anthropic.com`, a gateway URL (its path is kept as a prefix), the demo model. */
  upstream: string;
  credential: UpstreamCredential;
  /** Default 127.0.0.1; never anything but loopback in production. */
  host?: string;
  /** Default 0 (a free port). */
  port?: number;
  /** Called for each request that is refused or fails upstream; never given a credential. */
  log?: (fields: Record<string, unknown>, message: string) => void;
  /**
   * Timestamps of each forwarded exchange (`CONDUIT_LATENCY_TRACE`): the request's head from the
   * CLI, its body sent on, the upstream's answer, the first body chunk written back.
   */
  trace?: (stage: ProxyTraceStage, fields: { sessionId: string; path: string }) => void;
}

export type ProxyTraceStage = "proxy-request" | "proxy-request-sent" | "proxy-response" | "proxy-first-chunk";

/** What a session's proxy traffic amounted to. */
export interface ProxyUsage {
  requests: number;
  /** Request bodies sent upstream. */
  bytesUp: number;
  /** Response bodies sent back to the CLI. */
  bytesDown: number;
  /** Requests refused because the token was unknown or dead (per session only once revoked). */
  refused: number;
}

/** One spawn's credential: its environment for the CLI, and its end. */
export interface SessionCredential {
  readonly token: string;
  /** `ANTHROPIC_API_KEY` and `ANTHROPIC_BASE_URL` for the child. */
  readonly env: { ANTHROPIC_API_KEY: string; ANTHROPIC_BASE_URL: string };
  /** Ends the token; idempotent. A request in flight finishes, later ones get 401. */
  revoke(): void;
}

/** The running proxy. */
export interface CredentialProxy {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  /** A new token for one spawn of `sessionId`. */
  issue(sessionId: string): SessionCredential;
  /** Requests and bytes of `sessionId` so far (zeros for a session never seen). */
  usageOf(sessionId: string): ProxyUsage;
  /** Live tokens (for tests and metrics). */
  readonly liveTokens: number;
  /** Every session's requests and bytes since the proxy started (metrics). */
  totals(): ProxyUsage;
  close(): Promise<void>;
}

// Hop-by-hop headers belong to one connection; credentials are replaced, never forwarded.
const droppedRequestHeaders = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authorization",
  "transfer-encoding",
  "te",
  "trailer",
  "upgrade",
  "host",
  "x-api-key",
  "authorization",
]);
const droppedResponseHeaders = new Set(["connection", "keep-alive", "transfer-encoding", "trailer", "upgrade"]);

/** The Anthropic API's error body. */
export function apiErrorBody(type: "authentication_error" | "api_error", message: string): string {
  return JSON.stringify({ type: "error", error: { type, message } });
}

/** The token a request presents: `x-api-key`, else `Authorization: Bearer`. */
export function presentedToken(headers: http.IncomingHttpHeaders): string | undefined {
  const key = headers["x-api-key"];
  if (typeof key === "string" && key !== "") return key;
  const auth = headers.authorization;
  if (typeof auth === "string") {
    const match = /^Bearer\s+(\S+)$/i.exec(auth);
    if (match) return match[1];
  }
  return undefined;
}

/** The upstream URL of a request path: the upstream's own path stays in front (`https://gw/anthropic` + `/v1/messages`). */
export function upstreamUrl(upstream: URL, requestPath: string): URL {
  const base = upstream.pathname.replace(/\/+$/, "");
  const target = new URL(upstream.origin);
  const [pathname, query] = splitOnce(requestPath.startsWith("/") ? requestPath : `/${requestPath}`, "?");
  target.pathname = `${base}${pathname}`;
  if (query !== undefined) target.search = `?${query}`;
  return target;
}

function splitOnce(value: string, separator: string): [string, string | undefined] {
  const at = value.indexOf(separator);
  return at === -1 ? [value, undefined] : [value.slice(0, at), value.slice(at + 1)];
}

/** Starts the proxy on loopback and resolves once it listens. */
export async function startCredentialProxy(options: CredentialProxyOptions): Promise<CredentialProxy> {
  const upstream = new URL(options.upstream);
  if (upstream.protocol !== "http:" && upstream.protocol !== "https:") {
    throw new Error(`The upstream of the credential proxy must be http(s): ${upstream.protocol}`);
  }
  const client = upstream.protocol === "https:" ? https : http;
  const agent = new client.Agent({ keepAlive: true });
  const grants = new Map<string, string>(); // token → session id
  const usage = new Map<string, ProxyUsage>();
  const log = options.log ?? (() => undefined);
  const usageEntry = (sessionId: string): ProxyUsage => {
    let entry = usage.get(sessionId);
    if (entry === undefined) {
      entry = { requests: 0, bytesUp: 0, bytesDown: 0, refused: 0 };
      usage.set(sessionId, entry);
    }
    return entry;
  };
  const revokedOwner = new Map<string, string>(); // recently revoked token → session id, for the refused count

  const server = http.createServer({ noDelay: true }, (req, res) => {
    const token = presentedToken(req.headers);
    const sessionId = token === undefined ? undefined : grants.get(token);
    if (sessionId === undefined) {
      const owner = token === undefined ? undefined : revokedOwner.get(token);
      if (owner !== undefined) usageEntry(owner).refused++;
      log({ path: req.url, session: owner ?? null }, "credential proxy refused a request without a live session token");
      req.resume();
      res.writeHead(401, { "content-type": "application/json" });
      res.end(apiErrorBody("authentication_error", "invalid x-api-key: not a live Conduit session token"));
      return;
    }
    const counts = usageEntry(sessionId);
    counts.requests++;
    forward(req, res, counts, sessionId);
  });
  server.requestTimeout = 0; // streams may run for minutes
  server.headersTimeout = 60_000;

  const forward = (req: http.IncomingMessage, res: http.ServerResponse, counts: ProxyUsage, sessionId: string) => {
    const headers: http.OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (value !== undefined && !droppedRequestHeaders.has(name)) headers[name] = value;
    }
    if (options.credential.apiKey !== undefined) headers["x-api-key"] = options.credential.apiKey;
    if (options.credential.authToken !== undefined) headers.authorization = `Bearer ${options.credential.authToken}`;
    const target = upstreamUrl(upstream, req.url ?? "/");
    const traced = { sessionId, path: req.url ?? "/" };
    const trace = options.trace;
    trace?.("proxy-request", traced);
    if (trace) req.once("end", () => trace("proxy-request-sent", traced));
    const outgoing = client.request(target, { method: req.method, headers, agent }, (answer) => {
      trace?.("proxy-response", traced);
      const responseHeaders: http.OutgoingHttpHeaders = {};
      for (const [name, value] of Object.entries(answer.headers)) {
        if (value !== undefined && !droppedResponseHeaders.has(name)) responseHeaders[name] = value;
      }
      res.writeHead(answer.statusCode ?? 502, responseHeaders);
      // SSE: the CLI must see headers (and each event) as soon as the upstream sends them.
      res.flushHeaders();
      let first = true;
      answer.on("data", (chunk: Buffer) => {
        counts.bytesDown += chunk.length;
        if (first) {
          first = false;
          trace?.("proxy-first-chunk", traced);
        }
        if (!res.write(chunk)) {
          answer.pause();
          res.once("drain", () => answer.resume());
        }
      });
      answer.on("end", () => res.end());
      answer.on("error", () => res.destroy());
    });
    // Headers and body go out as they come: no Nagle delay on the way to the upstream.
    outgoing.setNoDelay(true);
    outgoing.on("error", (error) => {
      log({ session: sessionId, path: req.url, err: error.message }, "credential proxy: upstream request failed");
      if (!res.headersSent) {
        res.writeHead(502, { "content-type": "application/json" });
        res.end(apiErrorBody("api_error", "The upstream API could not be reached through Conduit's credential proxy."));
      } else {
        res.destroy();
      }
    });
    // The CLI went away mid-stream (interrupt, exit): stop the upstream request too.
    res.on("close", () => {
      if (!res.writableFinished) outgoing.destroy();
    });
    req.on("data", (chunk: Buffer) => {
      counts.bytesUp += chunk.length;
    });
    req.pipe(outgoing);
  };

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const url = `http://${address.address}:${address.port}`;

  return {
    url,
    port: address.port,
    get liveTokens() {
      return grants.size;
    },
    issue(sessionId) {
      const token = `sk-ant-conduit-${randomBytes(24).toString("base64url")}`;
      grants.set(token, sessionId);
      usageEntry(sessionId);
      return {
        token,
        env: { ANTHROPIC_API_KEY: token, ANTHROPIC_BASE_URL: url },
        revoke() {
          if (!grants.delete(token)) return;
          revokedOwner.set(token, sessionId);
          // Only a bounded memory of dead tokens, for the refused count.
          if (revokedOwner.size > 1000) revokedOwner.delete(revokedOwner.keys().next().value as string);
        },
      };
    },
    totals() {
      const sum: ProxyUsage = { requests: 0, bytesUp: 0, bytesDown: 0, refused: 0 };
      for (const u of usage.values()) {
        sum.requests += u.requests;
        sum.bytesUp += u.bytesUp;
        sum.bytesDown += u.bytesDown;
        sum.refused += u.refused;
      }
      return sum;
    },
    usageOf(sessionId) {
      return { ...(usage.get(sessionId) ?? { requests: 0, bytesUp: 0, bytesDown: 0, refused: 0 }) };
    },
    close() {
      grants.clear();
      return new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        agent.destroy();
      });
    },
  };
}
