/**
 * How the sidecar knows a socket request came through the edge. Browsers leave `Origin` out
 * of same-origin GETs (Socket.IO's polling transport), so the sidecar cannot check it there;
 * the edge has already checked what the browser sent, and says so with a header carrying a
 * value derived from the secret both processes get. The edge drops any such header arriving
 * from outside. Web Crypto only, so the edge (Deno-ready) and the sidecar share it.
 */

/** The request header the edge sets on everything it forwards to the sidecar. */
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
