import { NextRequest } from "next/server";
import { beforeAll, describe, expect, it, vi } from "vitest";
import type * as ProxyModule from "./proxy";

let proxy: typeof ProxyModule.proxy;

beforeAll(async () => {
  vi.stubEnv("CONDUIT_PUBLIC_URL", "https://conduit.example");
  ({ proxy } = await import("./proxy"));
});

// What the edge forwards: its own view of the browser's origin in x-forwarded-*.
const request = (path: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}) =>
  new NextRequest(`http://127.0.0.1:3101${path}`, {
    method: init.method ?? "POST",
    headers: { "x-forwarded-host": "127.0.0.1:3000", "x-forwarded-proto": "http", ...init.headers },
    ...(init.body !== undefined ? { body: init.body } : {}),
  });

const passes = (res: Response) => res.headers.get("x-middleware-next") === "1";

describe("proxy (the web app's cross-site wall)", () => {
  it("refuses a cross-site form post to a route handler with 403 JSON", async () => {
    const res = proxy(
      request("/api/workspaces", {
        headers: { origin: "https://evil.example", "content-type": "application/x-www-form-urlencoded" },
        body: "name=x",
      }),
    );
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ error: { code: "forbidden" } });
  });

  it("refuses a same-origin non-JSON body to a route handler with 415", () => {
    const res = proxy(
      request("/api/workspaces", {
        headers: { origin: "https://conduit.example", "content-type": "text/plain" },
        body: "{}",
      }),
    );
    expect(res.status).toBe(415);
  });

  it("lets through the public origin, the origin the edge saw, and GETs from anywhere", () => {
    const json = { "content-type": "application/json" };
    expect(
      passes(
        proxy(request("/api/workspaces", { headers: { origin: "https://conduit.example", ...json }, body: "{}" })),
      ),
    ).toBe(true);
    expect(
      passes(proxy(request("/api/workspaces", { headers: { origin: "http://127.0.0.1:3000", ...json }, body: "{}" }))),
    ).toBe(true);
    expect(
      passes(proxy(request("/api/workspaces", { method: "GET", headers: { origin: "https://evil.example" } }))),
    ).toBe(true);
    expect(
      passes(
        proxy(
          request("/api/auth/signout", {
            headers: { "sec-fetch-site": "same-origin", "content-type": "application/x-www-form-urlencoded" },
            body: "csrfToken=x",
          }),
        ),
      ),
    ).toBe(true);
  });

  it("refuses a request without Origin and without Sec-Fetch-Site: same-origin", () => {
    expect(proxy(request("/api/workspaces/w/members/u", { method: "DELETE" })).status).toBe(403);
  });
});
