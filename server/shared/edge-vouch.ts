/**
 * How the web app and the sidecar know a request came through the edge. Their ports are not
 * for anyone else: a session on the same machine could otherwise reach them directly, past the
 * edge's Host, Origin, cookie and rate-limit checks. The edge says "I checked this" with a
 * header carrying a value derived from the secret every part shares (NEXTAUTH_SECRET), after
 * dropping any such header arriving from outside; the web app (proxy.ts) and the sidecar (its
 * port's gate) refuse everything without it. Web Crypto only, so the edge (Deno-ready), the web
 * app and the sidecar share it.
 */

/** The request header the edge sets on everything it forwards (web app and sidecar). */
export const EDGE_VOUCH_HEADER = "x-conduit-edge";

/** The header's value for `secret` (HMAC-SHA256 of a fixed label, base64url). */
export async function deriveEdgeVouch(secret: string): Promise<string> {
  const key = await crypto.subtle.importKey(
    "raw",
    new TextEncoder().encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode("conduit-edge-vouch:v1")));
  let binary = "";
  for (const byte of mac) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** Compares a received header with the expected value without an early exit. */
export function isEdgeVouch(received: string | null | undefined, expected: string): boolean {
  if (typeof received !== "string" || received.length !== expected.length) return false;
  let diff = 0;
  for (let i = 0; i < expected.length; i += 1) diff |= received.charCodeAt(i) ^ expected.charCodeAt(i);
  return diff === 0;
}

/**
 * The client's address as the edge saw it (the key of its own rate limits), set on everything
 * it forwards and dropped from outside requests. Read only where the vouch was checked: the web
 * app's sign-in throttle keys on it, never on a caller-written `X-Forwarded-For`.
 */
export const EDGE_CLIENT_IP_HEADER = "x-conduit-client-ip";
