/**
 * Next.js 16's request proxy (formerly middleware), run before every route: the second wall
 * against cross-site requests, behind the edge's (server/edge-proxy/request-gate.ts). It
 * covers every route handler and page at once, the ones added later included, and holds
 * when the web app is reached without the edge (a misconfigured deployment).
 */
import { NextResponse, type NextRequest } from "next/server";
import { getEnv, publicOriginsOf, publicUrlOf } from "@/server/env/env";
import { checkSameOriginRequest } from "@/server/shared/same-origin-request";

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

export function proxy(req: NextRequest): NextResponse {
  if (req.method === "GET" || req.method === "HEAD") {
    // The admin area does not exist for anyone but admins: a signed-out visitor gets the same
    // 404 as a member (the IDE layout would otherwise send them to sign in, telling it exists).
    const path = req.nextUrl.pathname;
    if ((path === "/admin" || path.startsWith("/admin/")) && !hasSessionCookie(req)) {
      return NextResponse.rewrite(new URL("/__conduit/not-found", req.url));
    }
    return NextResponse.next();
  }
  const refusal = checkSameOriginRequest(req.method, req.nextUrl.pathname, req.headers, allowedOrigins(req));
  if (!refusal) return NextResponse.next();
  return NextResponse.json(
    { error: { code: refusal.code, message: refusal.message } },
    { status: refusal.status, headers: { "cache-control": "no-store" } },
  );
}

export const config = {
  // Static build output never changes state; everything else (pages, route handlers) is checked.
  matcher: ["/((?!_next/static|_next/image|favicon.ico|monaco/).*)"],
};
