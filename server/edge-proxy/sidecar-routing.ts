// Pure routing rules for several sidecars behind one edge: which upstream a Socket.IO request
// goes to, the sticky cookie that keeps a browser on it, and when an upstream is in or out.
// Web-standard only (Deno runs it unchanged).

/**
 * The edge's sticky cookie. Socket.IO's long-polling transport sends every request of one
 * Engine.IO session (`sid`) as a separate HTTP request, and only the sidecar that handed out the
 * `sid` knows it. A cookie (rather than a sid→upstream table learned from handshake bodies)
 * keeps the edge stateless: several edges, or an edge restarted, route a browser the same way,
 * and no response body has to be read. Browsers send it on every request; Node's
 * socket.io-client does with `withCredentials: true`.
 */
export const STICKY_COOKIE = "conduit-sidecar";

/** An upstream as the router sees it: its origin, the short id the cookie names it by, its health. */
export interface RoutedUpstream {
  origin: string;
  id: string;
  healthy: boolean;
}

/** Where one request goes, and whether the response must (re)set the sticky cookie. */
export interface SidecarChoice {
  origin: string;
  id: string;
  setCookie: boolean;
}

/**
 * The cookie's name for an upstream: FNV-1a of its origin, 8 hex digits. Stable across edges
 * with the same list (an index would move when the list is reordered) and it does not show
 * internal addresses to the browser.
 */
export function upstreamIdOf(origin: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < origin.length; i++) {
    hash ^= origin.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, "0");
}

/** The sticky cookie's value from a Cookie header, if it has the right shape. */
export function readStickyId(cookieHeader: string | null): string | undefined {
  if (!cookieHeader) return undefined;
  for (const part of cookieHeader.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0 || part.slice(0, eq).trim() !== STICKY_COOKIE) continue;
    const value = part.slice(eq + 1).trim();
    if (/^[0-9a-f]{8}$/.test(value)) return value;
  }
  return undefined;
}

/** The Set-Cookie value that pins this browser's socket traffic to an upstream. */
export function stickyCookieFor(id: string, secure: boolean): string {
  // Only Socket.IO's path needs it; HttpOnly because no script has any use for it.
  return `${STICKY_COOKIE}=${id}; Path=/socket.io/; HttpOnly; SameSite=Lax${secure ? "; Secure" : ""}`;
}

/**
 * Picks the sidecar for a socket request. The sticky upstream while it is healthy; otherwise
 * the next healthy one in turn (`turn` is a counter the caller advances). When none is healthy
 * every upstream is a candidate: the request is tried, and a 502 tells the truth if it is down
 * (so one configured sidecar behaves exactly as before health checks existed). With a single
 * upstream no cookie is ever set.
 */
export function chooseSidecar(upstreams: readonly RoutedUpstream[], stickyId: string | undefined, turn: number): SidecarChoice & { usedTurn: boolean } {
  if (upstreams.length === 0) throw new Error("chooseSidecar: no upstreams configured");
  const sticky = stickyId === undefined ? undefined : upstreams.find((u) => u.id === stickyId);
  const healthy = upstreams.filter((u) => u.healthy);
  const candidates = healthy.length > 0 ? healthy : upstreams;
  if (sticky && candidates.includes(sticky)) return { origin: sticky.origin, id: sticky.id, setCookie: false, usedTurn: false };
  const chosen = candidates[turn % candidates.length]!;
  return { origin: chosen.origin, id: chosen.id, setCookie: upstreams.length > 1, usedTurn: true };
}

/** How many checks in a row move an upstream out of, and back into, the rotation. */
export interface HealthThresholds {
  /** Failed checks in a row before a healthy upstream is taken out. */
  fallAfter: number;
  /** Good checks in a row before an upstream that is out is taken back in. */
  riseAfter: number;
}

/** One upstream's health as a small state machine over check results. */
export interface HealthState {
  healthy: boolean;
  /** Failed checks in a row while healthy. */
  fails: number;
  /** Good checks in a row while out. */
  passes: number;
}

export const initialHealth: HealthState = { healthy: true, fails: 0, passes: 0 };

/** The state after one check; `changed` says the upstream just went out or came back. */
export function recordCheck(state: HealthState, ok: boolean, thresholds: HealthThresholds): { state: HealthState; changed: boolean } {
  if (state.healthy) {
    if (ok) return { state: { healthy: true, fails: 0, passes: 0 }, changed: false };
    const fails = state.fails + 1;
    if (fails >= thresholds.fallAfter) return { state: { healthy: false, fails: 0, passes: 0 }, changed: true };
    return { state: { healthy: true, fails, passes: 0 }, changed: false };
  }
  if (!ok) return { state: { healthy: false, fails: 0, passes: 0 }, changed: false };
  const passes = state.passes + 1;
  if (passes >= thresholds.riseAfter) return { state: { healthy: true, fails: 0, passes: 0 }, changed: true };
  return { state: { healthy: false, fails: 0, passes }, changed: false };
}
