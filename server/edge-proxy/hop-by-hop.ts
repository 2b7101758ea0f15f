/**
 * Headers that describe one connection, not the message (RFC 9110 §7.6.1), plus the
 * non-standard ones proxies still see. A proxy must not forward them in either direction.
 */
export const HOP_BY_HOP_HEADERS = [
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "te",
  "trailer",
  "upgrade",
  "proxy-authenticate",
  "proxy-authorization",
] as const;

/**
 * Removes hop-by-hop headers from `headers` in place, including every header the
 * `Connection` header names (read first: deleting `connection` loses that list).
 */
export function stripHopByHop(headers: Headers): Headers {
  const listed = headers.get("connection");
  if (listed) {
    for (const name of listed.split(",")) {
      const trimmed = name.trim().toLowerCase();
      if (trimmed) headers.delete(trimmed);
    }
  }
  for (const name of HOP_BY_HOP_HEADERS) headers.delete(name);
  return headers;
}
