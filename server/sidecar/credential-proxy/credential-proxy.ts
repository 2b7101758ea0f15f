/**
 * The credential proxy: the only holder of the operator's Anthropic credential. Each CLI child
 * gets a random per-spawn token as its API key and `ANTHROPIC_BASE_URL` pointing here (loopback);
 * a request carrying a live token gets the real credential swapped in and goes to the upstream
 * (the Anthropic API, a gateway, or the offline demo model), and the answer streams back chunk
 * by chunk as it arrives (SSE: nothing is buffered). A token dies with its process; an unknown
 * or revoked one gets 401 in the API's error shape, so the CLI reports an auth failure.
 *
 * What a token may do (issue 37):
 * - only the methods and paths of `request-policy.ts` (the Messages API and token counting),
 *   matched on the request line as sent: a path in any other form gets 400, any other route 403,
 *   in the API's error shape, logged with the session id; nothing refused reaches the upstream,
 *   and the upstream's own path stays a prefix no request can climb out of;
 * - per session, at most `limits` Messages calls in flight and per minute (429 beyond them; token
 *   counting, free and sent in bursts by the CLI, has fixed looser caps);
 * - every Messages answer is metered as it passes (`usage-meter.ts`), and before each Messages
 *   call the session's budgets are checked with the spend the proxy saw that no CLI result has
 *   recorded yet (402 once spent). See {@link ProxyBudget} for how that spend reaches the ledger
 *   without counting anything twice.
 *
 * Invariants: the real credential appears in no child's environment, argv or config directory
 * and in no log line (only session ids, paths and counts are logged); requests and bytes are
 * counted per session, also after the token is revoked (for metrics and budgets).
 */
import { randomBytes } from "node:crypto";
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { checkRequest, type ProxyRoute } from "./request-policy";
import { SessionLimiter, type CallLimits } from "./session-limits";
import { meterAnswer, type MeteredCall, type MeteredTokens } from "./usage-meter";

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
  /**
   * Messages calls per session (`CONDUIT_PROXY_MAX_CONCURRENT`, `CONDUIT_PROXY_MAX_PER_MINUTE`);
   * defaults {@link defaultCallLimits}; 0 = no cap.
   */
  limits?: Partial<CallLimits>;
  /** Reads the usage of every Messages answer (default true; the bench turns it off to time it). */
  meter?: boolean;
  /** The budgets: none, no budget is checked (the spend is still metered). */
  budget?: ProxyBudget;
  /** The clock of the rate window; default `Date.now`. */
  now?: () => number;
}

/** Default caps of a session's Messages calls. */
export const defaultCallLimits: CallLimits = { maxConcurrent: 4, maxPerMinute: 120 };

/**
 * Token counting is free and the CLI sends it in bursts (`get_context_usage`: ~26 calls, up to
 * ~19 in flight, measured on CLI 2.1.332): fixed caps that such a burst stays under, still
 * bounding a flood.
 */
export const countTokensLimits: CallLimits = { maxConcurrent: 32, maxPerMinute: 600 };

/** The outcome of a budget check. */
export type ProxyBudgetDecision = { allowed: true } | { allowed: false; message: string };

/** Spend of a session that no CLI result recorded, handed to the ledger. */
export interface UnreportedSpend extends MeteredTokens {
  usd: number;
  /** The model of the session's last metered answer (the rows' label). */
  model: string | null;
  /** Metered answers in the period. */
  calls: number;
}

/**
 * How the proxy's meter and the CLI's own accounting fit together. The ledger (`CostEntry`)
 * records each turn from the CLI's `result`; the proxy meters every answer it relays, including
 * those no result will ever count (a `curl` from a tool with the session's token, the CLI's
 * unbilled side calls). The proxy keeps, per session, what it metered and what the session's
 * results recorded (`reportResult`, from the cost recorder) since the last settlement:
 *
 * - unreported = max(0, metered − reported). Every answer is metered when it ends, before the
 *   CLI can print the result that counts it, so a turn's own calls never show as unreported for
 *   longer than the turn; what stays unreported was never in a result.
 * - Before each Messages call, `check` adds the unreported spend to the month's ledger spend of
 *   the session's user and workspace: a session that spends directly meets its budget at the
 *   proxy (402), not only at its next prompt.
 * - When a spawn ends (its token revoked, its calls over) the period is settled: the unreported
 *   spend goes to `recordUnreported` (one ledger row) and both counters restart at zero, so the
 *   same dollar is never in the ledger twice and a period's rounding does not carry over.
 *
 * Limits: the proxy prices by the model its answer names (family rates, `usage-meter.ts`) while
 * the CLI prices by the model it asked for; a result recording more than was metered hides up to
 * that difference of direct spend until the spawn ends. Unreported spend of a spawn still running
 * when the sidecar is killed is lost (its answers were relayed, not recorded).
 */
export interface ProxyBudget {
  /** May `sessionId` start a billable call, its unreported spend added to the month's? */
  check(sessionId: string, unreportedUsd: number): Promise<ProxyBudgetDecision>;
  /** A settled period's unreported spend: store it in the ledger. */
  recordUnreported(sessionId: string, spend: UnreportedSpend): Promise<void>;
}

/** A session's metered spend. */
export interface ProxyMeter extends MeteredTokens {
  /** Metered answers since the proxy started. */
  calls: number;
  /** USD of them. */
  usd: number;
  /** Metered but in no CLI result yet, in the current period. */
  unreportedUsd: number;
}

/** What a recorded `result` counted (the cost recorder's turn). */
export interface ReportedSpend {
  usd: number;
  inputTokens?: number;
  outputTokens?: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
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
  /** Requests refused by the allow-list (400, 403). */
  forbidden: number;
  /** Requests refused by a fair limit (429). */
  limited: number;
  /** Requests refused because a budget was spent (402). */
  overBudget: number;
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
  /** What `sessionId`'s Messages answers cost, as metered here. */
  meterOf(sessionId: string): ProxyMeter;
  /** A `result` of `sessionId` was recorded: its spend is no longer unreported. */
  reportResult(sessionId: string, spend: ReportedSpend): void;
  /** Settles every session (their unreported spend stored), then stops. */
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

/** The Anthropic API's error types the proxy answers with. */
export type ApiErrorType =
  | "invalid_request_error"
  | "authentication_error"
  | "billing_error"
  | "permission_error"
  | "rate_limit_error"
  | "api_error";

/** The Anthropic API's error body. */
export function apiErrorBody(type: ApiErrorType, message: string): string {
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
  const messagesLimits: CallLimits = { ...defaultCallLimits, ...options.limits };
  const limiter = new SessionLimiter(options.now ?? Date.now);
  const metering = options.meter ?? true;
  const meters = new Map<string, SessionMeterState>();
  const settling = new Set<Promise<void>>();
  const usageEntry = (sessionId: string): ProxyUsage => {
    let entry = usage.get(sessionId);
    if (entry === undefined) {
      entry = emptyUsage();
      usage.set(sessionId, entry);
    }
    return entry;
  };
  const meterEntry = (sessionId: string): SessionMeterState => {
    let entry = meters.get(sessionId);
    if (entry === undefined) {
      entry = newMeterState();
      meters.set(sessionId, entry);
    }
    return entry;
  };
  const revokedOwner = new Map<string, string>(); // recently revoked token → session id, for the refused count

  const refuse = (
    res: http.ServerResponse,
    req: http.IncomingMessage,
    status: number,
    type: ApiErrorType,
    message: string,
    fields: Record<string, unknown>,
    headers: http.OutgoingHttpHeaders = {},
  ) => {
    log({ ...fields, method: req.method, path: req.url, status }, `credential proxy refused a request: ${message}`);
    answerAfterBody(req, res, status, apiErrorBody(type, message), headers);
  };

  const server = http.createServer({ noDelay: true }, (req, res) => {
    const token = presentedToken(req.headers);
    const sessionId = token === undefined ? undefined : grants.get(token);
    if (sessionId === undefined) {
      const owner = token === undefined ? undefined : revokedOwner.get(token);
      if (owner !== undefined) usageEntry(owner).refused++;
      log({ path: req.url, session: owner ?? null }, "credential proxy refused a request without a live session token");
      answerAfterBody(req, res, 401, apiErrorBody("authentication_error", "invalid x-api-key: not a live Conduit session token"));
      return;
    }
    const counts = usageEntry(sessionId);
    const decision = checkRequest(req.method, req.url);
    if (!decision.allowed) {
      counts.forbidden++;
      refuse(res, req, decision.status, decision.errorType, decision.message, { session: sessionId });
      return;
    }
    const what = decision.route === "messages" ? "model calls" : "token counting calls";
    const slot = limiter.acquire(`${sessionId}\n${decision.route}`, decision.route === "messages" ? messagesLimits : countTokensLimits, what);
    if (!slot.ok) {
      counts.limited++;
      refuse(res, req, 429, "rate_limit_error", slot.message, { session: sessionId, cap: slot.cap }, { "retry-after": String(slot.retryAfterSeconds) });
      return;
    }
    // The slot is held from here until the exchange is over (also while the budget is asked).
    res.once("close", () => {
      slot.release();
      // After the other close listeners: the answer's metered spend is recorded first.
      setImmediate(() => settleIfDone(sessionId));
    });
    if (decision.route !== "messages" || options.budget === undefined) {
      counts.requests++;
      forward(req, res, counts, sessionId, decision.route, decision.pathAndQuery);
      return;
    }
    const meter = meterEntry(sessionId);
    options.budget.check(sessionId, unreportedOf(meter)).then(
      (budget) => {
        if (res.destroyed) return;
        if (!budget.allowed) {
          counts.overBudget++;
          refuse(res, req, 402, "billing_error", budget.message, { session: sessionId, unreportedUsd: unreportedOf(meter) });
          return;
        }
        counts.requests++;
        forward(req, res, counts, sessionId, decision.route, decision.pathAndQuery);
      },
      (error: unknown) => {
        // Fail closed: without a budget answer nothing billable is relayed (the CLI retries a 500).
        refuse(res, req, 500, "api_error", "Conduit could not check this session's budget; try again shortly.", {
          session: sessionId,
          err: error instanceof Error ? error.message : String(error),
        });
      },
    );
  });
  server.requestTimeout = 0; // streams may run for minutes
  server.headersTimeout = 60_000;

  const forward = (
    req: http.IncomingMessage,
    res: http.ServerResponse,
    counts: ProxyUsage,
    sessionId: string,
    route: ProxyRoute,
    pathAndQuery: string,
  ) => {
    const headers: http.OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (value !== undefined && !droppedRequestHeaders.has(name)) headers[name] = value;
    }
    if (options.credential.apiKey !== undefined) headers["x-api-key"] = options.credential.apiKey;
    if (options.credential.authToken !== undefined) headers.authorization = `Bearer ${options.credential.authToken}`;
    const target = upstreamUrl(upstream, pathAndQuery);
    const traced = { sessionId, path: pathAndQuery };
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
      // Only successful Messages answers are billed, so only they are metered.
      const status = answer.statusCode ?? 502;
      const meter = metering && route === "messages" && status >= 200 && status < 300 ? meterAnswer(answer.headers["content-type"]) : undefined;
      if (meter !== undefined) res.once("close", () => recordCall(sessionId, meter.result()));
      let first = true;
      answer.on("data", (chunk: Buffer) => {
        counts.bytesDown += chunk.length;
        if (first) {
          first = false;
          trace?.("proxy-first-chunk", traced);
        }
        const flowing = res.write(chunk);
        // Read after the chunk is on its way: metering never holds an event back.
        meter?.feed(chunk);
        if (!flowing) {
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
      log({ session: sessionId, path: pathAndQuery, err: error.message }, "credential proxy: upstream request failed");
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

  const recordCall = (sessionId: string, call: MeteredCall) => {
    const m = meterEntry(sessionId);
    addTokens(m.lifetime, call);
    m.lifetime.usd += call.usd;
    m.calls++;
    addTokens(m.period, call);
    m.period.usd += call.usd;
    m.periodCalls++;
    if (call.model !== null) m.model = call.model;
  };

  // A period ends once the session has no live token and nothing in flight (its spawn is over).
  const settleIfDone = (sessionId: string) => {
    const m = meters.get(sessionId);
    if (m === undefined || !m.ended) return;
    if ([...grants.values()].includes(sessionId)) return;
    if (limiter.inFlight(`${sessionId}\nmessages`) > 0) return;
    m.ended = false;
    const unreported = unreportedSpendOf(m);
    m.period = zeroSpend();
    m.reported = zeroSpend();
    m.periodCalls = 0;
    if (unreported === undefined || options.budget === undefined) return;
    const stored: Promise<void> = options.budget
      .recordUnreported(sessionId, unreported)
      .catch((error: unknown) => {
        log({ session: sessionId, usd: unreported.usd, err: error instanceof Error ? error.message : String(error) }, "credential proxy: storing unreported spend failed");
      })
      .finally(() => settling.delete(stored));
    settling.add(stored);
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
      meterEntry(sessionId).ended = false;
      limiter.sweep();
      return {
        token,
        env: { ANTHROPIC_API_KEY: token, ANTHROPIC_BASE_URL: url },
        revoke() {
          if (!grants.delete(token)) return;
          revokedOwner.set(token, sessionId);
          // Only a bounded memory of dead tokens, for the refused count.
          if (revokedOwner.size > 1000) revokedOwner.delete(revokedOwner.keys().next().value as string);
          meterEntry(sessionId).ended = true;
          // After the current tick: the exit's last result lines are fed to the cost recorder first.
          setImmediate(() => settleIfDone(sessionId));
        },
      };
    },
    totals() {
      const sum = emptyUsage();
      for (const u of usage.values()) for (const key of Object.keys(sum) as (keyof ProxyUsage)[]) sum[key] += u[key];
      return sum;
    },
    usageOf(sessionId) {
      return { ...(usage.get(sessionId) ?? emptyUsage()) };
    },
    meterOf(sessionId) {
      const m = meters.get(sessionId) ?? newMeterState();
      return { calls: m.calls, ...m.lifetime, usd: roundUsd(m.lifetime.usd), unreportedUsd: unreportedOf(m) };
    },
    reportResult(sessionId, spend) {
      const r = meterEntry(sessionId).reported;
      r.usd += Math.max(0, spend.usd);
      r.inputTokens += spend.inputTokens ?? 0;
      r.outputTokens += spend.outputTokens ?? 0;
      r.cacheReadTokens += spend.cacheReadTokens ?? 0;
      r.cacheWriteTokens += spend.cacheWriteTokens ?? 0;
    },
    async close() {
      grants.clear();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        agent.destroy();
      });
      // Every exchange is over and metered: each session's period is settled.
      await new Promise((resolve) => setImmediate(resolve));
      for (const [sessionId, m] of meters) {
        m.ended = true;
        settleIfDone(sessionId);
      }
      await Promise.all(settling);
    },
  };
}

/**
 * A refusal, sent once the request's body is read and dropped: answering earlier makes Node close
 * the connection, and a client that reuses it meets a reset instead of the answer.
 */
function answerAfterBody(req: http.IncomingMessage, res: http.ServerResponse, status: number, body: string, headers: http.OutgoingHttpHeaders = {}): void {
  const send = () => {
    if (res.headersSent || res.destroyed) return;
    res.writeHead(status, { "content-type": "application/json", ...headers });
    res.end(body);
  };
  if (req.complete) {
    send();
    return;
  }
  req.once("end", send);
  req.once("error", () => res.destroy());
  req.resume();
}

function emptyUsage(): ProxyUsage {
  return { requests: 0, bytesUp: 0, bytesDown: 0, refused: 0, forbidden: 0, limited: 0, overBudget: 0 };
}

interface Spend extends MeteredTokens {
  usd: number;
}

interface SessionMeterState {
  calls: number;
  lifetime: Spend;
  /** Metered in the current period (since the last settlement). */
  period: Spend;
  periodCalls: number;
  /** Recorded by the session's results in the current period. */
  reported: Spend;
  model: string | null;
  /** The spawn's token was revoked: settle once nothing is in flight. */
  ended: boolean;
}

function zeroSpend(): Spend {
  return { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, webSearches: 0, usd: 0 };
}

function newMeterState(): SessionMeterState {
  return { calls: 0, lifetime: zeroSpend(), period: zeroSpend(), periodCalls: 0, reported: zeroSpend(), model: null, ended: false };
}

function addTokens(into: MeteredTokens, from: MeteredTokens): void {
  into.inputTokens += from.inputTokens;
  into.outputTokens += from.outputTokens;
  into.cacheReadTokens += from.cacheReadTokens;
  into.cacheWriteTokens += from.cacheWriteTokens;
  into.webSearches += from.webSearches;
}

function roundUsd(usd: number): number {
  return Math.round(usd * 1e8) / 1e8;
}

function unreportedOf(m: SessionMeterState): number {
  return roundUsd(Math.max(0, m.period.usd - m.reported.usd));
}

/** The period's spend no result recorded, or undefined when there is none. */
function unreportedSpendOf(m: SessionMeterState): UnreportedSpend | undefined {
  const usd = unreportedOf(m);
  if (usd <= 0) return undefined;
  const over = (key: keyof MeteredTokens) => Math.max(0, m.period[key] - m.reported[key]);
  return {
    usd,
    model: m.model,
    calls: m.periodCalls,
    inputTokens: over("inputTokens"),
    outputTokens: over("outputTokens"),
    cacheReadTokens: over("cacheReadTokens"),
    cacheWriteTokens: over("cacheWriteTokens"),
    webSearches: m.period.webSearches,
  };
}
