/**
 * The cross-site request rule, shared by the edge (which sees every request) and the web
 * app's `proxy.ts` (defence in depth behind it). Web-standard only: no `node:*`.
 *
 * A request that changes state (any method but GET and HEAD) must come from one of
 * Conduit's own pages: its `Origin` is an allowed origin, or, where a browser left `Origin`
 * out, `Sec-Fetch-Site: same-origin`. SameSite=Lax cookies do not stop this on their own:
 * another port of the same host is "same-site", and a top-level form POST carries them.
 * Route handlers take JSON only: a form can post `text/plain` or form-encoded bodies
 * cross-site without a CORS preflight, a JSON body cannot. next-auth's own endpoints
 * (`/api/auth/*`) are form-encoded by design and keep their CSRF token.
 */

/** Why a request was refused, with the HTTP status and the sentence a person sees. */
export interface CrossSiteRefusal {
  status: 403 | 415;
  code: "forbidden" | "invalid_payload";
  message: string;
}

/** Methods that never change state, so the rule does not apply to them. */
const safeMethods: ReadonlySet<string> = new Set(["GET", "HEAD"]);

/** Paths of route handlers (JSON bodies only), and of next-auth's form-encoded endpoints. */
const apiPrefix = "/api/";
const nextAuthPrefix = "/api/auth/";

/** `scheme://host:port` of a URL or Origin value, or null for `null`, garbage and opaque origins. */
export function normalizeOrigin(value: string): string | null {
  try {
    const origin = new URL(value).origin;
    return origin === "null" ? null : origin;
  } catch {
    return null;
  }
}

/** Whether a Content-Type header names JSON (`application/json`, any parameters). */
export function isJsonContentType(value: string | null): boolean {
  if (value === null) return false;
  const type = value.split(";")[0]!.trim().toLowerCase();
  return type === "application/json";
}

function hasBody(headers: Headers): boolean {
  const length = headers.get("content-length");
  if (length !== null && length.trim() !== "" && Number(length) > 0) return true;
  return headers.has("transfer-encoding");
}

/**
 * Checks one request against the rule; null when it may pass. `allowedOrigins` are the
 * origins of Conduit's own pages (the public origin and the one the request was made to).
 */
export function checkSameOriginRequest(
  method: string,
  pathname: string,
  headers: Headers,
  allowedOrigins: readonly string[],
): CrossSiteRefusal | null {
  if (safeMethods.has(method.toUpperCase())) return null;
  const originHeader = headers.get("origin");
  if (originHeader !== null) {
    const origin = normalizeOrigin(originHeader);
    const allowed = origin !== null && allowedOrigins.some((o) => normalizeOrigin(o) === origin);
    if (!allowed) {
      return {
        status: 403,
        code: "forbidden",
        message: `Refused: this request came from another site (${originHeader.slice(0, 100)}). Conduit accepts changes only from its own pages.`,
      };
    }
  } else if (headers.get("sec-fetch-site") !== "same-origin") {
    return {
      status: 403,
      code: "forbidden",
      message:
        "Refused: this request does not say where it came from (no Origin header). Conduit accepts changes only from its own pages; API clients must send the Origin of Conduit's public URL.",
    };
  }
  if (pathname.startsWith(apiPrefix) && !pathname.startsWith(nextAuthPrefix)) {
    const type = headers.get("content-type");
    if ((type !== null || hasBody(headers)) && !isJsonContentType(type)) {
      return {
        status: 415,
        code: "invalid_payload",
        message: `Refused: Conduit's API takes JSON bodies only (Content-Type: application/json), not ${type ?? "a body without a Content-Type"}.`,
      };
    }
  }
  return null;
}
