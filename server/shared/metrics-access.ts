/**
 * Who may read a part's `/metrics` (Prometheus text): a peer on the loopback interface (each
 * part's own port), or anyone presenting `Authorization: Bearer <CONDUIT_METRICS_TOKEN>` when the
 * operator set one. Pure and web-standard: the edge (Node and Deno), the web app and the sidecar
 * share it.
 */

export const METRICS_PATH = "/metrics";

/** `/metrics` and anything under it: never forwarded by the edge. */
export function isMetricsPath(pathname: string): boolean {
  return pathname === METRICS_PATH || pathname.startsWith(`${METRICS_PATH}/`);
}

/** 127.0.0.0/8, ::1 and their IPv4-mapped forms. */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (!address) return false;
  const ip = address.startsWith("::ffff:") ? address.slice("::ffff:".length) : address;
  return ip === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(ip);
}

/** Compares without an early exit on the first differing character. */
function sameText(a: string, b: string): boolean {
  let diff = a.length ^ b.length;
  for (let i = 0; i < Math.max(a.length, b.length); i++) diff |= (a.charCodeAt(i) || 0) ^ (b.charCodeAt(i) || 0);
  return diff === 0;
}

/** True when `authorization` is `Bearer <token>` and a token is configured. */
export function presentsMetricsToken(authorization: string | null | undefined, token: string | undefined): boolean {
  if (!token || !authorization) return false;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  return match !== null && sameText(match[1]!, token);
}

/** The decision for one request: loopback peers always, others with the token. */
export function mayReadMetrics(input: { peer: string | undefined; authorization: string | null | undefined; token: string | undefined }): boolean {
  return isLoopbackAddress(input.peer) || presentsMetricsToken(input.authorization, input.token);
}
