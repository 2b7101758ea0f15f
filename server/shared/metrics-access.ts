/**
 * Who may read a part's `/metrics` (Prometheus text): whoever presents
 * `Authorization: Bearer <CONDUIT_METRICS_TOKEN>`, and nobody when the operator set no token.
 * Being local proves nothing (a session on the same machine is local), so no address is
 * trusted. Pure and web-standard: the edge (Node and Deno), the web app and the sidecar share it.
 */

export const METRICS_PATH = "/metrics";

/** `/metrics` and anything under it: never forwarded by the edge. */
export function isMetricsPath(pathname: string): boolean {
  return pathname === METRICS_PATH || pathname.startsWith(`${METRICS_PATH}/`);
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

/** The decision for one request: the token's holder only. */
export function mayReadMetrics(input: { authorization: string | null | undefined; token: string | undefined }): boolean {
  return presentsMetricsToken(input.authorization, input.token);
}
