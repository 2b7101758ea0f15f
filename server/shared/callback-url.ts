/**
 * Where a person goes after signing in (or up): the page they asked for, carried as
 * `?callbackUrl=`. Only a path of Conduit itself is followed; anything that a browser could read
 * as another site (`//evil.com`, `/\evil.com`, `https://evil.com`, `javascript:`, control
 * characters that browsers strip) falls back to the workspaces, so the parameter is never an open
 * redirect. Pure; used by the pages and their forms alike.
 */

export const defaultLanding = "/workspaces";

/** The request header the web app's proxy (proxy.ts) sets to a page's path and query, for its sign-in redirect. */
export const PAGE_PATH_HEADER = "x-conduit-page-path";

/** The sign-in and sign-up pages are no landing: a callback to them would loop. */
const noLanding = /^\/(signin|signup)(\/|\?|#|$)/;

/** A same-origin path (with its query and fragment) from `raw`, or `fallback`. */
export function safeCallbackPath(raw: string | null | undefined, fallback: string = defaultLanding): string {
  if (typeof raw !== "string" || raw.length === 0 || raw.length > 2048) return fallback;
  // one leading slash, then not a second slash or backslash (protocol-relative in browsers)
  if (!raw.startsWith("/") || raw.startsWith("//") || raw.startsWith("/\\")) return fallback;
  // backslashes read as slashes, and tabs or newlines dropped, by the URL parser: refuse them all
  // eslint-disable-next-line no-control-regex
  if (/[\\\u0000-\u001f\u007f]/.test(raw)) return fallback;
  // an encoded slash or backslash right after the first one decodes to the same tricks further on
  if (/^\/(%2f|%5c)/i.test(raw)) return fallback;
  let parsed: URL;
  try {
    parsed = new URL(raw, "http://conduit.invalid");
  } catch {
    return fallback;
  }
  if (parsed.origin !== "http://conduit.invalid") return fallback;
  const path = `${parsed.pathname}${parsed.search}${parsed.hash}`;
  if (noLanding.test(path)) return fallback;
  return path;
}

/** The sign-in page's address that comes back to `path` afterwards (`/signin` alone for the default landing). */
export function signInHref(path: string | null | undefined, extra: Record<string, string> = {}): string {
  const params = new URLSearchParams(extra);
  const back = safeCallbackPath(path, "");
  if (back && back !== defaultLanding && back !== "/") params.set("callbackUrl", back);
  const query = params.toString();
  return query ? `/signin?${query}` : "/signin";
}
