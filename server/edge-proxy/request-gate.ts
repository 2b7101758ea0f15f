import { ErrorCode } from "../shared/errors/app-error";
import { checkSameOriginRequest, normalizeOrigin } from "../shared/same-origin-request";
import { jsonErrorResponse } from "./edge-responses";
import type { EdgeLog } from "./edge-log";
import type { Forwarding } from "./forwarding";
import { createRateLimiter, type BucketSettings, type RateLimiter } from "./rate-limiter";
import { hasSessionCookie } from "./session-cookie";

/** Requests under this prefix belong to the sidecar (Socket.IO's default path). */
export const SOCKET_PATH_PREFIX = "/socket.io/";

/**
 * Sign-in, sign-up and invitation-accept endpoints whose `POST`s are rate-limited per client
 * address (accepting takes a secret token and may create an account: a guessing target too).
 */
export const DEFAULT_LOGIN_PATHS = ["/api/auth/callback/credentials", "/api/signup", "/api/invitations/accept"] as const;

export interface RateLimitSettings {
  /** Exact paths (no query) whose `POST` counts as a login attempt. */
  loginPaths: readonly string[];
  login: BucketSettings;
  /** Socket.IO handshakes: `/socket.io/` requests without a `sid`. */
  handshake: BucketSettings;
}

/**
 * Ten quick attempts, then one every six seconds, is far above a person retyping a
 * password and far below a guessing script. Handshakes are generous: every page load and
 * every reconnect after a sidecar restart makes one.
 */
export const DEFAULT_RATE_LIMITS: RateLimitSettings = {
  loginPaths: DEFAULT_LOGIN_PATHS,
  login: { capacity: 10, refillPerMinute: 10 },
  handshake: { capacity: 60, refillPerMinute: 60 },
};

export interface RequestGateOptions {
  publicOrigin: string;
  sessionCookieNames: readonly string[];
  rateLimit: RateLimitSettings | false;
  now: () => number;
  log: EdgeLog;
}

/** Refuses a request before it reaches an upstream, or lets it through (`null`). */
export type RequestGate = (req: Request, url: URL, forwarding: Forwarding) => Response | null;

/**
 * The checks the edge makes itself, shared by plain HTTP and WebSocket upgrades so that both
 * spend from the same buckets. Socket traffic must come from Conduit's own pages (an
 * `Origin`, when the browser sends one, equal to the public origin or the origin the
 * request was made to — `localhost` and `127.0.0.1` both work) and carry a session cookie.
 * A missing `Origin` is allowed: browsers omit it on same-origin GETs (Socket.IO polling),
 * and the cookie check still applies.
 *
 * Every other request that changes state (not GET or HEAD) must come from Conduit's own
 * pages too, and route handlers take JSON bodies only (`checkSameOriginRequest`): a form on
 * another site (another port of this host counts as "same-site" for SameSite cookies)
 * cannot post to Conduit with the visitor's cookie.
 */
export function createRequestGate(options: RequestGateOptions): RequestGate {
  const publicOrigin = normalizeOrigin(options.publicOrigin);
  const limits = options.rateLimit;
  const login: RateLimiter | null = limits ? createRateLimiter(limits.login, options.now) : null;
  const handshake: RateLimiter | null = limits ? createRateLimiter(limits.handshake, options.now) : null;
  const loginPaths = new Set(limits ? limits.loginPaths.map((p) => p.replace(/\/+$/, "")) : []);

  function limited(limiter: RateLimiter | null, key: string, req: Request, url: URL, what: string) {
    if (!limiter) return null;
    const decision = limiter.take(key);
    if (decision.allowed) return null;
    options.log({
      level: "warn",
      event: "rate_limited",
      method: req.method,
      path: url.pathname,
      clientIp: key,
      status: 429,
    });
    return jsonErrorResponse(
      429,
      ErrorCode.rateLimited,
      `Too many ${what} from your address. Try again in ${decision.retryAfterSeconds} s.`,
      { "retry-after": String(decision.retryAfterSeconds) },
    );
  }

  function refuse(
    status: number,
    code: ErrorCode,
    message: string,
    req: Request,
    url: URL,
    key: string,
    event: "socket_refused" | "request_refused" = "socket_refused",
  ) {
    options.log({
      level: "info",
      event,
      method: req.method,
      path: url.pathname,
      clientIp: key,
      status,
    });
    return jsonErrorResponse(status, code, message);
  }

  return (req, url, forwarding) => {
    const key = forwarding.clientKey;
    if (url.pathname.startsWith(SOCKET_PATH_PREFIX)) {
      const originHeader = req.headers.get("origin");
      if (originHeader !== null) {
        const origin = normalizeOrigin(originHeader);
        const allowed =
          origin !== null && (origin === publicOrigin || origin === normalizeOrigin(forwarding.requestOrigin));
        if (!allowed)
          return refuse(403, ErrorCode.forbidden, "This origin may not open Conduit sessions.", req, url, key);
      }
      if (!hasSessionCookie(req.headers.get("cookie"), options.sessionCookieNames)) {
        return refuse(401, ErrorCode.unauthorized, "Sign in to Conduit first.", req, url, key);
      }
      if (!url.searchParams.has("sid")) return limited(handshake, key, req, url, "connection attempts");
      return null;
    }
    const crossSite = checkSameOriginRequest(req.method, url.pathname, req.headers, [
      ...(publicOrigin ? [publicOrigin] : []),
      forwarding.requestOrigin,
    ]);
    if (crossSite) {
      const code = crossSite.code === "forbidden" ? ErrorCode.forbidden : ErrorCode.invalidPayload;
      return refuse(crossSite.status, code, crossSite.message, req, url, key, "request_refused");
    }
    if (req.method === "POST" && loginPaths.has(url.pathname.replace(/\/+$/, ""))) {
      return limited(login, key, req, url, "sign-in attempts");
    }
    return null;
  };
}
