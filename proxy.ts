/**
 * Next.js 16's request proxy (formerly middleware), run before every route. First, the web
 * app's port answers only requests the edge vouched for (`x-conduit-edge`, server/shared/
 * edge-vouch): a session on the same machine reaching 127.0.0.1:CONDUIT_NEXT_PORT directly
 * would skip the edge's Host check, rate limits and cross-site wall. Then the second wall
 * against cross-site requests, behind the edge's (server/edge-proxy/request-gate.ts). It covers
 * every route handler and page at once, the ones added later included.
 */
import { NextResponse, type NextRequest } from "next/server";
import { getEnv, publicOriginsOf, publicUrlOf } from "@/server/env/env";
import { deriveEdgeVouch, EDGE_VOUCH_HEADER, isEdgeVouch } from "@/server/shared/edge-vouch";
import { isMetricsPath } from "@/server/shared/metrics-access";
import { PAGE_PATH_HEADER } from "@/server/shared/callback-url";
import { checkSameOriginRequest } from "@/server/shared/same-origin-request";
import { logger } from "@/server/web/logger";

let expectedVouch: Promise<string | null> | undefined;

/** The vouch the edge sends, from the secret every part shares; null without a secret (nothing passes). */
function edgeVouch(): Promise<string | null> {
  const secret = getEnv().NEXTAUTH_SECRET;
  expectedVouch ??= secret ? deriveEdgeVouch(secret) : Promise.resolve(null);
  return expectedVouch;
}

/** The answer to a request that did not come through the edge. */
function notThroughEdge(req: NextRequest, expected: string | null): NextResponse {
  const reason = expected === null ? "NEXTAUTH_SECRET is not set, so no request can be checked" : "no valid x-conduit-edge header";
  logger.warn({ method: req.method, path: req.nextUrl.pathname, reason }, "request refused: not through the edge");
  return NextResponse.json(
    {
      error: {
        code: "forbidden",
        message: "Refused: this port answers only requests forwarded by Conduit's edge. Open Conduit's public address instead.",
      },
    },
    { status: 403, headers: { "cache-control": "no-store" } },
  );
}

let publicOrigins: string[] | undefined;

/** The origins of Conduit's own pages: the public URL's, and the one the edge says the browser used. */
function allowedOrigins(req: NextRequest): string[] {
  publicOrigins ??= publicOriginsOf(publicUrlOf(getEnv()));
  const host = req.headers.get("x-forwarded-host");
  const proto = req.headers.get("x-forwarded-proto");
  // The edge sets both from what it saw and drops forged ones (unless a trusted proxy set them).
  return host && proto ? [...publicOrigins, `${proto}://${host}`] : publicOrigins;
}

/** True when the request carries a next-auth session cookie (valid or not: the pages decide). */
function hasSessionCookie(req: NextRequest): boolean {
  return req.cookies.has("next-auth.session-token") || req.cookies.has("__Secure-next-auth.session-token");
}

export async function proxy(req: NextRequest): Promise<NextResponse> {
  // The scraper's way in: never forwarded by the edge, answered to the token's holder only (app/metrics).
  if (isMetricsPath(req.nextUrl.pathname)) return NextResponse.next();
  const expected = await edgeVouch();
  if (expected === null || !isEdgeVouch(req.headers.get(EDGE_VOUCH_HEADER), expected)) return notThroughEdge(req, expected);
  if (req.method === "GET" || req.method === "HEAD") {
    // The admin area does not exist for anyone but admins: a signed-out visitor gets the same
    // 404 as a member (the IDE layout would otherwise send them to sign in, telling it exists).
    const path = req.nextUrl.pathname;
    if ((path === "/admin" || path.startsWith("/admin/")) && !hasSessionCookie(req)) {
      return NextResponse.rewrite(new URL("/__conduit/not-found", req.url));
    }
    if (path.startsWith("/api/")) return NextResponse.next();
    // A page's own address, for its sign-in redirect to come back to (a layout cannot read the
    // URL): set here, so a header the browser sent under this name never counts.
    const headers = new Headers(req.headers);
    headers.set(PAGE_PATH_HEADER, `${path}${req.nextUrl.search}`);
    return NextResponse.next({ request: { headers } });
  }
  const refusal = checkSameOriginRequest(req.method, req.nextUrl.pathname, req.headers, allowedOrigins(req));
  if (!refusal) return NextResponse.next();
  return NextResponse.json(
    { error: { code: refusal.code, message: refusal.message } },
    { status: refusal.status, headers: { "cache-control": "no-store" } },
  );
}

export const config = {
  // Static build output (the same files for everyone, never state) is served as is; everything
  // else, pages, route handlers and /api/health included, is checked (/metrics by its token).
  matcher: ["/((?!_next/static|favicon.ico|monaco/).*)"],
};
