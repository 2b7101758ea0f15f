/**
 * Cookie names under which next-auth v4 stores the session JWT: the plain name over http,
 * the `__Secure-` name over https. The sidecar reads the same names when it verifies a
 * socket handshake, so import them from here rather than spelling them twice.
 */
export const SESSION_COOKIE_NAMES = ["next-auth.session-token", "__Secure-next-auth.session-token"] as const;

/**
 * Whether a `Cookie` header carries a non-empty session cookie under one of `names`, whole
 * or chunked (`name.0`, `name.1`, … — next-auth splits a JWT larger than about 4 kB).
 * Presence only: the sidecar decrypts and verifies; the edge refuses obvious junk early.
 */
export function hasSessionCookie(
  cookieHeader: string | null,
  names: readonly string[] = SESSION_COOKIE_NAMES,
): boolean {
  if (!cookieHeader) return false;
  for (const pair of cookieHeader.split(";")) {
    const eq = pair.indexOf("=");
    if (eq < 0) continue;
    const name = pair.slice(0, eq).trim();
    const value = pair.slice(eq + 1).trim();
    if (value === "" || value === '""') continue;
    const base = /\.\d+$/.test(name) ? name.slice(0, name.lastIndexOf(".")) : name;
    if (names.includes(base)) return true;
  }
  return false;
}
