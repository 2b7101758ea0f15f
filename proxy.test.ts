import { NextRequest } from "next/server";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { deriveEdgeVouch } from "./server/shared/edge-vouch";
import type * as ProxyModule from "./proxy";

let proxy: typeof ProxyModule.proxy;
const secret = "s".repeat(40);
let vouch: string;

beforeAll(async () => {
  vi.stubEnv("CONDUIT_PUBLIC_URL", "https://conduit.example");
  vi.stubEnv("NEXTAUTH_SECRET", secret);
  vouch = await deriveEdgeVouch(secret);
  ({ proxy } = await import("./proxy"));
});

// What the edge forwards: its vouch, and its own view of the browser's origin in x-forwarded-*.
const request = (path: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}) =>
  new NextRequest(`http://127.0.0.1:3101${path}`, {
    method: init.method ?? "POST",
    headers: { "x-conduit-edge": vouch, "x-forwarded-host": "127.0.0.1:3000", "x-forwarded-proto": "http", ...init.headers },
    ...(init.body !== undefined ? { body: init.body } : {}),
  });

describe("proxy (only what the edge vouched for)", () => {
  it("refuses every request without the edge's vouch with 403, GETs of pages and the health check included", async () => {
    for (const [path, method] of [["/", "GET"], ["/api/health", "GET"], ["/api/signup", "POST"], ["/_next/image", "GET"]] as const) {
      for (const headers of [{ "x-conduit-edge": "" }, { "x-conduit-edge": "forged" }, { "x-conduit-edge": `${vouch}x` }]) {
        const res = await proxy(request(path, { method, headers: { origin: "https://conduit.example", ...headers } }));
        expect(res.status, `${method} ${path} ${JSON.stringify(headers)}`).toBe(403);
        expect(await res.json()).toMatchObject({ error: { code: "forbidden", message: expect.stringContaining("edge") } });
      }
    }
    const bare = new NextRequest("http://127.0.0.1:3101/api/workspaces");
    expect((await proxy(bare)).status).toBe(403);
  });

  it("leaves /metrics to its route, which asks for the token", async () => {
    const res = await proxy(new NextRequest("http://127.0.0.1:3101/metrics"));
    expect(res.headers.get("x-middleware-next")).toBe("1");
  });

  it("lets a vouched GET through", async () => {
    const res = await proxy(request("/api/health", { method: "GET" }));
    expect(res.headers.get("x-middleware-next")).toBe("1");
  });

  it("tells a page its own path and query (for the sign-in redirect to come back), overriding a sent one", async () => {
    const res = await proxy(request("/w/team/s/abc?x=1", { method: "GET", headers: { "x-conduit-page-path": "//evil.com" } }));
    expect(res.headers.get("x-middleware-next")).toBe("1");
    expect(res.headers.get("x-middleware-override-headers")).toContain("x-conduit-page-path");
    expect(res.headers.get("x-middleware-request-x-conduit-page-path")).toBe("/w/team/s/abc?x=1");
  });
});

const passes = (res: Response) => res.headers.get("x-middleware-next") === "1";

describe("proxy (the web app's cross-site wall)", () => {
  it("refuses a cross-site form post to a route handler with 403 JSON", async () => {
    const res = await proxy(
      request("/api/workspaces", {
        headers: { origin: "https://evil.example", "content-type": "application/x-www-form-urlencoded" },
        body: "name=x",
      }),
    );
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ error: { code: "forbidden" } });
  });

  it("refuses a same-origin non-JSON body to a route handler with 415", async () => {
    const res = await proxy(
      request("/api/workspaces", {
        headers: { origin: "https://conduit.example", "content-type": "text/plain" },
        body: "{}",
      }),
    );
    expect(res.status).toBe(415);
  });

  it("lets through the public origin, the origin the edge saw, and GETs from anywhere", async () => {
    const json = { "content-type": "application/json" };
    expect(
      passes(
        await proxy(request("/api/workspaces", { headers: { origin: "https://conduit.example", ...json }, body: "{}" })),
      ),
    ).toBe(true);
    expect(
      passes(await proxy(request("/api/workspaces", { headers: { origin: "http://127.0.0.1:3000", ...json }, body: "{}" }))),
    ).toBe(true);
    expect(
      passes(await proxy(request("/api/workspaces", { method: "GET", headers: { origin: "https://evil.example" } }))),
    ).toBe(true);
    expect(
      passes(
        await proxy(
          request("/api/auth/signout", {
            headers: { "sec-fetch-site": "same-origin", "content-type": "application/x-www-form-urlencoded" },
            body: "csrfToken=x",
          }),
        ),
      ),
    ).toBe(true);
  });

  it("refuses a request without Origin and without Sec-Fetch-Site: same-origin", async () => {
    expect((await proxy(request("/api/workspaces/w/members/u", { method: "DELETE" }))).status).toBe(403);
  });
});
