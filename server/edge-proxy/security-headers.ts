export interface CspOptions {
  /** Development build of Next (React needs `eval` for its debugging call stacks there). */
  dev: boolean;
  /** Page origins the browser may open a WebSocket back to (public origin, the one in use). */
  origins: readonly string[];
}

/**
 * The Content-Security-Policy for Conduit's pages. Each relaxation is there for a reason:
 *
 * - `script-src 'unsafe-inline'`: the App Router streams its RSC payload as inline
 *   `<script>self.__next_f.push(…)</script>` tags and has no nonce unless every page is
 *   rendered dynamically through `proxy.ts`. The edge cannot add nonces to HTML it streams.
 * - `'unsafe-eval'` only in development: React's dev build and Next's dev overlay evaluate
 *   code; the production build and Monaco do not. Monaco 0.57 loads through the AMD
 *   `loader.js` with `<script>` tags on the page; its eval path is only used inside a worker
 *   that runs that loader, which 0.57's bundled workers do not.
 * - `worker-src 'self' blob:`: Monaco starts each worker from a `blob:` URL whose one line is
 *   `importScripts(<same-origin worker file>)`.
 * - `style-src 'unsafe-inline'`: Monaco injects `<style>` elements and style attributes;
 *   Next inlines critical CSS.
 * - `font-src data:`: codicons and some Next fonts arrive inline.
 * - `connect-src` lists the ws(s) form of each page origin instead of any `ws:`/`wss:`
 *   host: older Safari does not let `'self'` cover WebSockets, and a blanket `wss:` would
 *   let injected script send data anywhere.
 * - No `form-action`: Chrome applies it to the redirect after a form post, which would
 *   break the sign-in redirect to an OAuth provider.
 */
export function buildContentSecurityPolicy(options: CspOptions): string {
  const sockets = new Set<string>();
  for (const origin of options.origins) {
    if (origin.startsWith("https://")) sockets.add(`wss://${origin.slice("https://".length)}`);
    else if (origin.startsWith("http://")) sockets.add(`ws://${origin.slice("http://".length)}`);
  }
  const script = ["'self'", "'unsafe-inline'", ...(options.dev ? ["'unsafe-eval'"] : [])];
  return [
    "default-src 'self'",
    `script-src ${script.join(" ")}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    `connect-src ${["'self'", ...sockets].join(" ")}`,
    "worker-src 'self' blob:",
    "object-src 'none'",
    "base-uri 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
}

/** Browser features Conduit never uses, turned off for every page it serves. */
export const PERMISSIONS_POLICY = "camera=(), microphone=(), geolocation=(), payment=(), usb=()";

/**
 * Sets the security headers on a response, each only where the upstream did not set it:
 * a header the web app chose for one route (a stricter CSP with nonces, a page that may be
 * framed by its own origin) is deliberate and more specific than the edge's default.
 */
export function applySecurityHeaders(headers: Headers, csp: string): Headers {
  const defaults: Record<string, string> = {
    "content-security-policy": csp,
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "strict-origin-when-cross-origin",
    "permissions-policy": PERMISSIONS_POLICY,
    "cross-origin-opener-policy": "same-origin",
  };
  for (const [name, value] of Object.entries(defaults)) {
    if (!headers.has(name)) headers.set(name, value);
  }
  return headers;
}
