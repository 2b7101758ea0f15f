import { describe, expect, it } from "vitest";
import type { EdgeLogEntry } from "./edge-log";
import { createEdgeHandler, type EdgeHandlerDeps } from "./handler";

const NEXT = "http://127.0.0.1:3001";
const SIDECAR = "http://127.0.0.1:3002";
const PUBLIC = "http://localhost:3000";
const COOKIE = "next-auth.session-token=abc.def";

interface Call {
  url: URL;
  init: RequestInit;
  headers: Headers;
  body: string | null;
}

/** A fetch that records what the edge sent and answers with `respond`'s Response. */
function stubFetch(respond: (call: Call) => Response | Promise<Response> = () => new Response("ok")) {
  const calls: Call[] = [];
  const fetch = (async (input: RequestInfo | URL, init: RequestInit = {}) => {
    const body = init.body ? await new Response(init.body).text() : null;
    const call = { url: new URL(String(input)), init, headers: new Headers(init.headers), body };
    calls.push(call);
    return respond(call);
  }) as typeof globalThis.fetch;
  return { fetch, calls };
}

function makeEdge(overrides: Partial<EdgeHandlerDeps> = {}, respond?: Parameters<typeof stubFetch>[0]) {
  const stub = stubFetch(respond);
  const logs: EdgeLogEntry[] = [];
  const handler = createEdgeHandler({
    nextOrigin: NEXT,
    sidecarOrigin: SIDECAR,
    publicOrigin: PUBLIC,
    fetch: stub.fetch,
    log: (entry) => logs.push(entry),
    ...overrides,
  });
  return { handler, calls: stub.calls, logs };
}

const socketRequest = (query = "EIO=4&transport=polling", headers: Record<string, string> = { cookie: COOKIE }) =>
  new Request(`${PUBLIC}/socket.io/?${query}`, { headers });

describe("routing", () => {
  it("sends /socket.io/ to the sidecar with path and query kept", async () => {
    const { handler, calls } = makeEdge();
    const res = await handler(socketRequest("EIO=4&transport=polling&t=abc"));
    expect(res.status).toBe(200);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.url.href).toBe(`${SIDECAR}/socket.io/?EIO=4&transport=polling&t=abc`);
  });

  it("sends everything else to Next with path and query kept", async () => {
    const { handler, calls } = makeEdge();
    await handler(new Request(`${PUBLIC}/workspaces/w1?tab=history&x=%20y`));
    await handler(new Request(`${PUBLIC}/socket.io`));
    expect(calls.map((c) => c.url.href)).toEqual([`${NEXT}/workspaces/w1?tab=history&x=%20y`, `${NEXT}/socket.io`]);
  });

  it("keeps a protocol-relative looking path on the upstream host", async () => {
    const { handler, calls } = makeEdge();
    await handler(new Request(`${PUBLIC}//evil.example/steal?q=1`));
    expect(calls[0]!.url.host).toBe("127.0.0.1:3001");
    expect(calls[0]!.url.pathname).toBe("//evil.example/steal");
  });

  it("forwards method and body, without redirects followed", async () => {
    const { handler, calls } = makeEdge({}, () => new Response(null, { status: 302, headers: { location: "/login" } }));
    const res = await handler(
      new Request(`${PUBLIC}/api/things`, {
        method: "POST",
        body: JSON.stringify({ a: 1 }),
        headers: { "content-type": "application/json", origin: PUBLIC },
      }),
    );
    expect(calls[0]!.init.method).toBe("POST");
    expect(calls[0]!.init.redirect).toBe("manual");
    expect((calls[0]!.init as { duplex?: string }).duplex).toBe("half");
    expect(calls[0]!.body).toBe('{"a":1}');
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("/login");
  });

  it("sends no body for GET", async () => {
    const { handler, calls } = makeEdge();
    await handler(new Request(`${PUBLIC}/`));
    expect(calls[0]!.init.body).toBeUndefined();
    expect((calls[0]!.init as { duplex?: string }).duplex).toBeUndefined();
  });
});

describe("headers", () => {
  it("strips hop-by-hop request headers, including those named in Connection", async () => {
    const { handler, calls } = makeEdge();
    await handler(
      new Request(`${PUBLIC}/page`, {
        headers: {
          connection: "keep-alive, X-Private-Hop",
          "keep-alive": "timeout=5",
          "x-private-hop": "secret",
          "proxy-connection": "keep-alive",
          te: "trailers",
          trailer: "x-checksum",
          upgrade: "h2c",
          "proxy-authorization": "Basic Zm9vOmJhcg==",
          host: "localhost:3000",
          accept: "text/html",
          cookie: "a=1",
        },
      }),
    );
    const sent = calls[0]!.headers;
    for (const name of [
      "connection",
      "keep-alive",
      "x-private-hop",
      "proxy-connection",
      "te",
      "trailer",
      "upgrade",
      "proxy-authorization",
      "host",
      "content-length",
    ]) {
      expect(sent.has(name), name).toBe(false);
    }
    expect(sent.get("accept")).toBe("text/html");
    expect(sent.get("cookie")).toBe("a=1");
  });

  it("strips hop-by-hop and encoding headers from the upstream response", async () => {
    const { handler } = makeEdge(
      {},
      () =>
        new Response("body", {
          headers: {
            connection: "close, X-Upstream-Hop",
            "x-upstream-hop": "1",
            "keep-alive": "timeout=5",
            "proxy-authenticate": "Basic",
            trailer: "x-checksum",
            upgrade: "h2c",
            "content-encoding": "gzip",
            "content-length": "999",
            "x-kept": "yes",
          },
        }),
    );
    const res = await handler(new Request(`${PUBLIC}/`));
    for (const name of [
      "connection",
      "x-upstream-hop",
      "keep-alive",
      "proxy-authenticate",
      "trailer",
      "upgrade",
      "content-encoding",
      "content-length",
    ]) {
      expect(res.headers.has(name), name).toBe(false);
    }
    expect(res.headers.get("x-kept")).toBe("yes");
    expect(await res.text()).toBe("body");
  });

  it("sets x-forwarded-* from what the edge saw and drops forged ones", async () => {
    const { handler, calls } = makeEdge();
    await handler(
      new Request(`${PUBLIC}/x`, {
        headers: {
          "x-forwarded-for": "6.6.6.6",
          "x-forwarded-host": "evil.example",
          "x-forwarded-port": "1",
          forwarded: "for=6.6.6.6",
        },
      }),
      { clientIp: "203.0.113.7" },
    );
    const sent = calls[0]!.headers;
    expect(sent.get("x-forwarded-for")).toBe("203.0.113.7");
    expect(sent.get("x-forwarded-host")).toBe("localhost:3000");
    expect(sent.get("x-forwarded-proto")).toBe("http");
    expect(sent.has("x-forwarded-port")).toBe(false);
    expect(sent.has("forwarded")).toBe(false);
  });

  it("keeps a trusted proxy's forwarding headers and appends the peer", async () => {
    const { handler, calls } = makeEdge({ trustProxy: true, publicOrigin: "https://conduit.example" });
    await handler(
      new Request(`${PUBLIC}/x`, {
        headers: {
          "x-forwarded-for": "198.51.100.1",
          "x-forwarded-host": "conduit.example",
          "x-forwarded-proto": "https",
        },
      }),
      { clientIp: "10.0.0.2" },
    );
    const sent = calls[0]!.headers;
    expect(sent.get("x-forwarded-for")).toBe("198.51.100.1, 10.0.0.2");
    expect(sent.get("x-forwarded-host")).toBe("conduit.example");
    expect(sent.get("x-forwarded-proto")).toBe("https");
  });

  it("keeps every set-cookie header separate", async () => {
    const { handler } = makeEdge({}, () => {
      const headers = new Headers();
      headers.append("set-cookie", "next-auth.csrf-token=a; Path=/; HttpOnly");
      headers.append("set-cookie", "next-auth.callback-url=b; Path=/");
      headers.append("set-cookie", "next-auth.session-token=c; Path=/; HttpOnly; SameSite=Lax");
      return new Response(null, { status: 302, headers });
    });
    const res = await handler(
      new Request(`${PUBLIC}/api/auth/callback/credentials`, {
        method: "POST",
        body: "x",
        headers: { origin: PUBLIC },
      }),
    );
    expect(res.headers.getSetCookie()).toEqual([
      "next-auth.csrf-token=a; Path=/; HttpOnly",
      "next-auth.callback-url=b; Path=/",
      "next-auth.session-token=c; Path=/; HttpOnly; SameSite=Lax",
    ]);
  });
});

describe("security headers", () => {
  it("sets them on pages from Next", async () => {
    const { handler } = makeEdge();
    const res = await handler(new Request(`${PUBLIC}/`));
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("referrer-policy")).toBe("strict-origin-when-cross-origin");
    expect(res.headers.get("cross-origin-opener-policy")).toBe("same-origin");
    expect(res.headers.get("permissions-policy")).toContain("camera=()");
    const csp = res.headers.get("content-security-policy")!;
    const directives = Object.fromEntries(csp.split("; ").map((d) => [d.split(" ")[0], d.split(" ").slice(1)]));
    expect(directives["default-src"]).toEqual(["'self'"]);
    expect(directives["script-src"]).toEqual(["'self'", "'unsafe-inline'"]);
    expect(directives["style-src"]).toEqual(["'self'", "'unsafe-inline'"]);
    expect(directives["worker-src"]).toEqual(["'self'", "blob:"]);
    expect(directives["font-src"]).toEqual(["'self'", "data:"]);
    expect(directives["img-src"]).toEqual(["'self'", "data:", "blob:"]);
    expect(directives["connect-src"]).toEqual(["'self'", "ws://localhost:3000"]);
    expect(directives["frame-ancestors"]).toEqual(["'none'"]);
    expect(directives["object-src"]).toEqual(["'none'"]);
  });

  it("allows eval only in development, and WebSockets to the origin actually used", async () => {
    const { handler } = makeEdge({ dev: true, publicOrigin: "https://conduit.example", listenPort: 3000 });
    const res = await handler(new Request("http://127.0.0.1:3000/"));
    expect(res.status).toBe(200);
    const csp = res.headers.get("content-security-policy")!;
    expect(csp).toContain("script-src 'self' 'unsafe-inline' 'unsafe-eval'");
    expect(csp).toContain("connect-src 'self' wss://conduit.example ws://127.0.0.1:3000");
  });

  it("keeps security headers the upstream set deliberately", async () => {
    const { handler } = makeEdge(
      {},
      () =>
        new Response("x", {
          headers: { "content-security-policy": "default-src 'none'", "x-frame-options": "SAMEORIGIN" },
        }),
    );
    const res = await handler(new Request(`${PUBLIC}/embed`));
    expect(res.headers.get("content-security-policy")).toBe("default-src 'none'");
    expect(res.headers.get("x-frame-options")).toBe("SAMEORIGIN");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
  });

  it("uses a CSP given in the deps verbatim", async () => {
    const { handler } = makeEdge({ contentSecurityPolicy: "default-src 'self'" });
    const res = await handler(new Request(`${PUBLIC}/`));
    expect(res.headers.get("content-security-policy")).toBe("default-src 'self'");
  });
});

describe("upstream failure", () => {
  const refused = () => {
    throw new TypeError("fetch failed", {
      cause: Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:3001"), { code: "ECONNREFUSED" }),
    });
  };

  it("answers a page request with a 502 page naming the web server", async () => {
    const { handler, logs } = makeEdge({}, refused);
    const res = await handler(new Request(`${PUBLIC}/workspaces?token=secret`, { headers: { accept: "text/html" } }));
    expect(res.status).toBe(502);
    expect(res.headers.get("content-type")).toContain("text/html");
    expect(res.headers.get("retry-after")).toBe("5");
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    const html = await res.text();
    expect(html).toContain("Conduit's web server is not answering");
    expect(html).toMatch(/Reload this page/);
    expect(html).not.toMatch(/ECONNREFUSED|fetch failed|127\.0\.0\.1|\n\s+at /);
    expect(logs).toEqual([
      expect.objectContaining({
        level: "error",
        event: "upstream_unavailable",
        upstream: "web",
        path: "/workspaces",
        status: 502,
        reason: "TypeError: fetch failed (ECONNREFUSED)",
      }),
    ]);
  });

  it("answers /api/ and JSON requests with a JSON error", async () => {
    const { handler } = makeEdge({}, refused);
    for (const req of [
      new Request(`${PUBLIC}/api/sessions`),
      new Request(`${PUBLIC}/anything`, { headers: { accept: "application/json" } }),
    ]) {
      const res = await handler(req);
      expect(res.status).toBe(502);
      expect(res.headers.get("content-type")).toContain("application/json");
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe("unavailable");
      expect(body.error.message).toContain("Conduit's web server is not answering");
      expect(body.error.message).not.toContain("ECONNREFUSED");
    }
  });

  it("names the session server when the sidecar is down", async () => {
    const { handler } = makeEdge({}, refused);
    const res = await handler(socketRequest());
    expect(res.status).toBe(502);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error).toMatchObject({ code: "unavailable" });
    expect(body.error.message).toContain("session server");
  });

  it("gives up on an upstream that sends no headers in time", async () => {
    const { handler, logs } = makeEdge(
      { upstreamTimeoutMs: 20 },
      ({ init }) =>
        new Promise<Response>((_resolve, reject) => {
          init.signal!.addEventListener("abort", () => reject(new DOMException("aborted", "AbortError")));
        }),
    );
    const res = await handler(new Request(`${PUBLIC}/slow`));
    expect(res.status).toBe(502);
    expect(await res.text()).toContain("did not answer in time");
    expect(logs[0]).toMatchObject({ event: "upstream_timeout" });
  });
});

describe("rate limiting", () => {
  const login = (ip = "203.0.113.7") =>
    [
      new Request(`${PUBLIC}/api/auth/callback/credentials`, {
        method: "POST",
        body: "u=a&p=b",
        headers: { origin: PUBLIC, "content-type": "application/x-www-form-urlencoded" },
      }),
      { clientIp: ip },
    ] as const;

  it("refuses login attempts past the bucket with Retry-After, and recovers", async () => {
    let clock = 1_000_000;
    const { handler, calls, logs } = makeEdge({
      now: () => clock,
      rateLimit: { login: { capacity: 2, refillPerMinute: 2 } },
    });
    expect((await handler(...login())).status).toBe(200);
    expect((await handler(...login())).status).toBe(200);
    const limited = await handler(...login());
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("30");
    expect(((await limited.json()) as { error: { code: string } }).error.code).toBe("rate_limited");
    expect(calls).toHaveLength(2);
    expect(logs.at(-1)).toMatchObject({ event: "rate_limited", clientIp: "203.0.113.7" });

    expect((await handler(...login("198.51.100.9"))).status).toBe(200);
    expect(
      (await handler(new Request(`${PUBLIC}/api/auth/callback/credentials`), { clientIp: "203.0.113.7" })).status,
    ).toBe(200);

    clock += 29_000;
    expect((await handler(...login())).status).toBe(429);
    clock += 1_000;
    expect((await handler(...login())).status).toBe(200);
    expect((await handler(...login())).status).toBe(429);
  });

  it("counts invitation accepts as login attempts by default", async () => {
    const { handler } = makeEdge({ now: () => 0, rateLimit: { login: { capacity: 1, refillPerMinute: 1 } } });
    const accept = () =>
      handler(
        new Request(`${PUBLIC}/api/invitations/accept`, {
          method: "POST",
          body: JSON.stringify({ token: "guess" }),
          headers: { origin: PUBLIC, "content-type": "application/json" },
        }),
        { clientIp: "203.0.113.8" },
      );
    expect((await accept()).status).toBe(200);
    expect((await accept()).status).toBe(429);
  });

  it("uses the configured login paths", async () => {
    const { handler } = makeEdge({
      now: () => 0,
      rateLimit: { loginPaths: ["/api/login"], login: { capacity: 1, refillPerMinute: 1 } },
    });
    const post = (path: string) =>
      handler(
        new Request(`${PUBLIC}${path}`, {
          method: "POST",
          body: "{}",
          headers: { origin: PUBLIC, "content-type": "application/json" },
        }),
        { clientIp: "1.2.3.4" },
      );
    expect((await post("/api/login")).status).toBe(200);
    expect((await post("/api/login/")).status).toBe(429);
    expect((await post("/api/auth/callback/credentials")).status).toBe(200);
    expect((await post("/api/auth/callback/credentials")).status).toBe(200);
  });

  it("limits socket handshakes but not traffic of an open session (sid)", async () => {
    let clock = 0;
    const { handler } = makeEdge({ now: () => clock, rateLimit: { handshake: { capacity: 1, refillPerMinute: 6 } } });
    const ip = { clientIp: "203.0.113.7" };
    expect((await handler(socketRequest(), ip)).status).toBe(200);
    const limited = await handler(socketRequest(), ip);
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("10");
    expect((await handler(socketRequest("EIO=4&transport=polling&sid=abc"), ip)).status).toBe(200);
    clock += 10_000;
    expect((await handler(socketRequest(), ip)).status).toBe(200);
  });

  it("can be turned off", async () => {
    const { handler } = makeEdge({ now: () => 0, rateLimit: false });
    for (let i = 0; i < 30; i++) expect((await handler(...login())).status).toBe(200);
  });

  it("shares the handshake bucket between HTTP and WebSocket upgrades", async () => {
    const { handler } = makeEdge({ now: () => 0, rateLimit: { handshake: { capacity: 1, refillPerMinute: 1 } } });
    expect((await handler(socketRequest(), { clientIp: "5.5.5.5" })).status).toBe(200);
    const decision = handler.upgrade(socketRequest("EIO=4&transport=websocket"), { clientIp: "5.5.5.5" });
    expect(decision.ok).toBe(false);
    if (!decision.ok) expect(decision.response.status).toBe(429);
  });
});

describe("cross-site requests", () => {
  const post = (path: string, headers: Record<string, string>, body: string | null = "{}", method = "POST") =>
    new Request(`${PUBLIC}${path}`, { method, body, headers });
  const errorOf = async (res: Response) => ((await res.json()) as { error: { code: string; message: string } }).error;

  it("refuses a cross-site form post to a route handler with 403 before it reaches Next", async () => {
    const { handler, calls, logs } = makeEdge();
    const res = await handler(
      post(
        "/api/workspaces",
        { origin: "http://evil.example", "content-type": "application/x-www-form-urlencoded" },
        "name=x",
      ),
      { clientIp: "203.0.113.7" },
    );
    expect(res.status).toBe(403);
    const error = await errorOf(res);
    expect(error.code).toBe("forbidden");
    expect(error.message).toContain("another site");
    expect(calls).toHaveLength(0);
    expect(logs).toEqual([expect.objectContaining({ event: "request_refused", status: 403, path: "/api/workspaces" })]);
    expect(res.headers.get("x-frame-options")).toBe("DENY");
  });

  it("refuses another port of the same host (same-site, not same-origin)", async () => {
    const { handler, calls } = makeEdge();
    const res = await handler(
      post("/api/workspaces", { origin: "http://localhost:8080", "content-type": "application/json" }),
    );
    expect(res.status).toBe(403);
    expect(calls).toHaveLength(0);
  });

  it("refuses a state change that names no origin, unless the browser says same-origin", async () => {
    const { handler, calls } = makeEdge();
    const bare = await handler(post("/api/workspaces", { "content-type": "application/json" }));
    expect(bare.status).toBe(403);
    expect((await errorOf(bare)).message).toContain("no Origin");
    const crossSite = await handler(
      post("/api/workspaces", { "content-type": "application/json", "sec-fetch-site": "cross-site" }),
    );
    expect(crossSite.status).toBe(403);
    const sameOrigin = await handler(
      post("/api/workspaces", { "content-type": "application/json", "sec-fetch-site": "same-origin" }),
    );
    expect(sameOrigin.status).toBe(200);
    expect(calls).toHaveLength(1);
  });

  it("refuses a null Origin (sandboxed frame) and a forged Sec-Fetch-Site beside a foreign Origin", async () => {
    const { handler, calls } = makeEdge();
    expect(
      (await handler(post("/api/workspaces", { origin: "null", "content-type": "application/json" }))).status,
    ).toBe(403);
    const forged = post("/api/workspaces", {
      origin: "https://evil.example",
      "sec-fetch-site": "same-origin",
      "content-type": "application/json",
    });
    expect((await handler(forged)).status).toBe(403);
    expect(calls).toHaveLength(0);
  });

  it("covers every method but GET and HEAD, and every path (pages too)", async () => {
    const { handler, calls } = makeEdge();
    for (const method of ["PUT", "PATCH", "DELETE", "POST"]) {
      expect(
        (await handler(post("/api/workspaces/w1/members/u2", { origin: "http://evil.example" }, null, method))).status,
      ).toBe(403);
    }
    expect(
      (await handler(post("/workspaces/w1", { origin: "http://evil.example", "content-type": "text/plain" }, "x")))
        .status,
    ).toBe(403);
    expect(
      (await handler(new Request(`${PUBLIC}/api/workspaces`, { headers: { origin: "http://evil.example" } }))).status,
    ).toBe(200);
    expect((await handler(new Request(`${PUBLIC}/api/workspaces`, { method: "HEAD" }))).status).toBe(200);
    expect(calls).toHaveLength(2);
  });

  it("lets the app's own requests through: public origin or the origin in use, JSON or no body", async () => {
    const { handler, calls } = makeEdge();
    const json = { "content-type": "application/json; charset=utf-8" };
    expect((await handler(post("/api/workspaces", { origin: PUBLIC, ...json }))).status).toBe(200);
    const viaIp = new Request("http://127.0.0.1:3000/api/workspaces", {
      method: "POST",
      body: "{}",
      headers: { origin: "http://127.0.0.1:3000", ...json },
    });
    expect((await handler(viaIp)).status).toBe(200);
    expect((await handler(post("/api/workspaces/w1/members/u2", { origin: PUBLIC }, null, "DELETE"))).status).toBe(200);
    expect(calls).toHaveLength(3);
  });

  it("answers a same-origin non-JSON body to a route handler with 415", async () => {
    const { handler, calls } = makeEdge();
    for (const type of ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"]) {
      const res = await handler(post("/api/workspaces", { origin: PUBLIC, "content-type": type }, "a=1"));
      expect(res.status).toBe(415);
      const error = await errorOf(res);
      expect(error.code).toBe("invalid_payload");
      expect(error.message).toContain("application/json");
    }
    const untyped = new Request(`${PUBLIC}/api/workspaces`, {
      method: "POST",
      body: new Blob(["{}"]),
      headers: { origin: PUBLIC, "content-length": "2" },
    });
    expect((await handler(untyped)).status).toBe(415);
    expect(calls).toHaveLength(0);
  });

  it("keeps next-auth's form posts working, with the Origin check still applied", async () => {
    const { handler, calls } = makeEdge({ rateLimit: false });
    const form = { "content-type": "application/x-www-form-urlencoded" };
    expect((await handler(post("/api/auth/signout", { origin: PUBLIC, ...form }, "csrfToken=t"))).status).toBe(200);
    expect(
      (await handler(post("/api/auth/callback/credentials", { origin: PUBLIC, ...form }, "csrfToken=t"))).status,
    ).toBe(200);
    expect(
      (await handler(post("/api/auth/signout", { origin: "http://evil.example", ...form }, "csrfToken=t"))).status,
    ).toBe(403);
    expect(calls).toHaveLength(2);
  });
});

describe("edge vouch", () => {
  it("sets the vouch header on everything it forwards (sidecar and web app), and drops one sent from outside", async () => {
    const { handler, calls } = makeEdge({ edgeVouch: "v".repeat(43) });
    await handler(socketRequest("EIO=4&transport=polling", { cookie: COOKIE, "x-conduit-edge": "forged" }));
    await handler(new Request(`${PUBLIC}/workspaces`, { headers: { "x-conduit-edge": "forged" } }));
    expect(calls[0]!.headers.get("x-conduit-edge")).toBe("v".repeat(43));
    expect(calls[1]!.headers.get("x-conduit-edge")).toBe("v".repeat(43));
    const decision = handler.upgrade(
      socketRequest("EIO=4&transport=websocket", { cookie: COOKIE, "x-conduit-edge": "forged" }),
    );
    expect(decision.ok && decision.forwarding.set["x-conduit-edge"]).toBe("v".repeat(43));
    expect(decision.ok && decision.forwarding.remove).toContain("x-conduit-edge");
  });

  it("forwards no vouch when it has none, and still drops a forged one", async () => {
    const { handler, calls } = makeEdge();
    await handler(socketRequest("EIO=4&transport=polling", { cookie: COOKIE, "x-conduit-edge": "forged" }));
    expect(calls[0]!.headers.get("x-conduit-edge")).toBeNull();
  });

  it("tells the upstream the client's address in its own header, replacing one sent from outside", async () => {
    const { handler, calls } = makeEdge({ edgeVouch: "v".repeat(43) });
    const forged = { "x-conduit-client-ip": "6.6.6.6", "x-forwarded-for": "7.7.7.7" };
    await handler(new Request(`${PUBLIC}/login`, { headers: forged }), { clientIp: "203.0.113.7" });
    expect(calls[0]!.headers.get("x-conduit-client-ip")).toBe("203.0.113.7");
    const behind = makeEdge({ edgeVouch: "v".repeat(43), trustProxy: true });
    await behind.handler(new Request(`${PUBLIC}/login`, { headers: { ...forged, "x-forwarded-for": "6.6.6.6, 198.51.100.1" } }), { clientIp: "10.0.0.2" });
    // behind a trusted proxy: the address that proxy added, as the edge's own rate limits count it
    expect(behind.calls[0]!.headers.get("x-conduit-client-ip")).toBe("198.51.100.1");
    const upgrade = handler.upgrade(socketRequest("EIO=4&transport=websocket", { cookie: COOKIE, ...forged }), { clientIp: "203.0.113.7" });
    expect(upgrade.ok && upgrade.forwarding.set["x-conduit-client-ip"]).toBe("203.0.113.7");
    expect(upgrade.ok && upgrade.forwarding.remove).toContain("x-conduit-client-ip");
  });
});

describe("Host (DNS rebinding)", () => {
  const withHost = (host: string, path = "/", init: RequestInit & { headers?: Record<string, string> } = {}) =>
    new Request(`http://${host}${path}`, { ...init, headers: { host, ...init.headers } });

  it("refuses another name with 421 and a short text, on pages, the API, socket polling and upgrades, forwarding nothing", async () => {
    const { handler, calls, logs } = makeEdge({ edgeVouch: "v".repeat(43) });
    const json = { "content-type": "application/json" };
    for (const req of [
      withHost("evil.example:3000"),
      withHost("evil.example:3000", "/api/workspaces"),
      withHost("evil.example:3000", "/socket.io/?EIO=4&transport=polling", { headers: { cookie: COOKIE } }),
      withHost("evil.example:3000", "/socket.io/?EIO=4&transport=polling&sid=s1", { headers: { cookie: COOKIE } }),
      withHost("evil.example:3000", "/api/workspaces", { method: "POST", body: "{}", headers: { origin: "http://evil.example:3000", ...json } }),
    ]) {
      const res = await handler(req);
      expect(res.status, req.url).toBe(421);
      expect(res.headers.get("content-type")).toBe("text/plain; charset=utf-8");
      expect(await res.text()).toMatch(/^421 Misdirected Request/);
    }
    expect(calls).toHaveLength(0);
    expect(logs.filter((l) => l.event === "host_refused")).toHaveLength(5);
    expect(logs[0]).toMatchObject({ level: "warn", status: 421, reason: expect.stringContaining("evil.example:3000") });

    for (const path of ["/socket.io/?EIO=4&transport=websocket", "/_next/webpack-hmr"]) {
      const decision = handler.upgrade(withHost("evil.example:3000", path, { headers: { cookie: COOKIE, origin: "http://evil.example:3000" } }));
      expect(decision.ok, path).toBe(false);
      if (!decision.ok) expect(decision.response.status).toBe(421);
    }
  });

  it("refuses the first account's sign-up whose Host and Origin name another site, before it reaches the web app", async () => {
    const { handler, calls } = makeEdge();
    const res = await handler(
      withHost("rebind.attacker.example:3000", "/api/signup", {
        method: "POST",
        body: JSON.stringify({ email: "a@evil.example", password: "correct horse battery staple" }),
        headers: { origin: "http://rebind.attacker.example:3000", "content-type": "application/json" },
      }),
    );
    expect(res.status).toBe(421);
    expect(calls).toHaveLength(0);
  });

  it("answers the public name and the loopback names at its port (and at the port the edge listens on)", async () => {
    const { handler, calls } = makeEdge({ listenPort: 3100 });
    for (const host of ["localhost:3000", "LOCALHOST:3000", "127.0.0.1:3000", "[::1]:3000", "127.0.0.1:3100", "localhost:3100"]) {
      expect((await handler(withHost(host, "/login"))).status, host).toBe(200);
    }
    for (const host of ["127.0.0.1:3001", "localhost", "127.0.0.2:3000", "evil.example@localhost:3000", "localhost:3000/x", "", "localhost.:3000"]) {
      const req = new Request(`${PUBLIC}/login`, { headers: { host } });
      expect((await handler(req)).status, JSON.stringify(host)).toBe(421);
    }
    expect(calls).toHaveLength(6);
  });

  it("takes a Host without a port as the public URL's default port", async () => {
    const { handler } = makeEdge({ publicOrigin: "https://conduit.example" });
    expect((await handler(withHost("conduit.example"))).status).toBe(200);
    expect((await handler(withHost("conduit.example:443"))).status).toBe(200);
    expect((await handler(withHost("Conduit.Example"))).status).toBe(200);
    expect((await handler(withHost("conduit.example:8443"))).status).toBe(421);
    expect((await handler(withHost("other.example"))).status).toBe(421);
  });

  it("checks a trusted proxy's X-Forwarded-Host instead of the Host it rewrote, and ignores it otherwise", async () => {
    const behind = makeEdge({ trustProxy: true, publicOrigin: "https://conduit.example" });
    const internal = "edge.internal:3000";
    const via = (forwardedHost?: string) =>
      withHost(internal, "/", { headers: { "x-forwarded-proto": "https", ...(forwardedHost ? { "x-forwarded-host": forwardedHost } : {}) } });
    expect((await behind.handler(via("conduit.example"))).status).toBe(200);
    expect((await behind.handler(via("evil.example"))).status).toBe(421);
    expect((await behind.handler(via("evil.example, conduit.example"))).status).toBe(421);
    // a proxy that keeps the Host and adds nothing: the Host is checked
    expect((await behind.handler(withHost("conduit.example"))).status).toBe(200);
    expect((await behind.handler(via())).status).toBe(421);

    const direct = makeEdge();
    expect((await direct.handler(withHost("localhost:3000", "/", { headers: { "x-forwarded-host": "evil.example" } }))).status).toBe(200);
    expect((await direct.handler(withHost("evil.example", "/", { headers: { "x-forwarded-host": "localhost:3000" } }))).status).toBe(421);
  });

  it("answers /healthz and /metrics whatever the name (they change nothing; /metrics asks for its token)", async () => {
    const { handler, calls } = makeEdge({ metricsToken: "t".repeat(20) });
    expect((await handler(withHost("10.0.0.1:3000", "/healthz"))).status).toBe(200);
    expect((await handler(withHost("10.0.0.1:3000", "/metrics"))).status).toBe(404);
    expect((await handler(withHost("10.0.0.1:3000", "/metrics", { headers: { authorization: `Bearer ${"t".repeat(20)}` } }))).status).toBe(200);
    expect(calls).toHaveLength(0);
  });
});

describe("socket admission", () => {
  it("refuses socket traffic without a session cookie with 401", async () => {
    const { handler, calls, logs } = makeEdge();
    for (const cookie of [undefined, "other=1", "next-auth.session-token=", "next-auth.csrf-token=abc"]) {
      const res = await handler(socketRequest("EIO=4&transport=polling", cookie ? { cookie } : {}));
      expect(res.status).toBe(401);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("unauthorized");
    }
    expect(calls).toHaveLength(0);
    expect(logs[0]).toMatchObject({ event: "socket_refused", status: 401 });
  });

  it("accepts the secure and the chunked session cookie", async () => {
    const { handler, calls } = makeEdge();
    for (const cookie of [
      "a=1; __Secure-next-auth.session-token=xyz",
      "next-auth.session-token.0=part1; next-auth.session-token.1=part2",
    ]) {
      expect((await handler(socketRequest("EIO=4&transport=polling", { cookie }))).status).toBe(200);
    }
    expect(calls).toHaveLength(2);
  });

  it("refuses a foreign Origin with 403", async () => {
    const { handler, calls } = makeEdge();
    for (const origin of ["http://evil.example", "null", "http://localhost:3001", "not a url"]) {
      const res = await handler(socketRequest("EIO=4&transport=polling", { cookie: COOKIE, origin }));
      expect(res.status, origin).toBe(403);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("forbidden");
    }
    expect(calls).toHaveLength(0);
  });

  it("accepts the public origin, the origin the request was made to, and no Origin", async () => {
    const { handler, calls } = makeEdge();
    await handler(socketRequest("EIO=4&transport=polling", { cookie: COOKIE, origin: PUBLIC }));
    await handler(
      new Request("http://127.0.0.1:3000/socket.io/?EIO=4&transport=polling", {
        headers: { cookie: COOKIE, origin: "http://127.0.0.1:3000" },
      }),
    );
    await handler(socketRequest());
    expect(calls).toHaveLength(3);
  });

  it("does not check cookies on ordinary pages", async () => {
    const { handler } = makeEdge();
    expect((await handler(new Request(`${PUBLIC}/login`, { headers: { origin: "http://evil.example" } }))).status).toBe(
      200,
    );
  });

  it("decides upgrades with the same rules", () => {
    const { handler } = makeEdge();
    const ok = handler.upgrade(socketRequest("EIO=4&transport=websocket"), { clientIp: "203.0.113.7" });
    expect(ok).toMatchObject({ ok: true, upstream: "sidecar", target: SIDECAR });
    if (ok.ok) expect(ok.forwarding.set["x-forwarded-for"]).toBe("203.0.113.7");
    const noCookie = handler.upgrade(socketRequest("EIO=4&transport=websocket", {}));
    expect(noCookie.ok || noCookie.response.status).toBe(401);
    const hmr = handler.upgrade(new Request(`${PUBLIC}/_next/webpack-hmr`));
    expect(hmr).toMatchObject({ ok: true, upstream: "web", target: NEXT });
  });
});

describe("health", () => {
  it("answers GET /healthz itself", async () => {
    const { handler, calls } = makeEdge();
    const res = await handler(new Request(`${PUBLIC}/healthz`));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true });
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(calls).toHaveLength(0);
  });

  it("refuses other methods", async () => {
    const { handler, calls } = makeEdge();
    const res = await handler(new Request(`${PUBLIC}/healthz`, { method: "POST" }));
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET, HEAD");
    expect(calls).toHaveLength(0);
  });
});

describe("several sidecars", () => {
  const SIDECAR_B = "http://127.0.0.1:3012";
  const two = () => makeEdge({ sidecarOrigin: [SIDECAR, SIDECAR_B], healthCheck: false });

  it("spreads new browsers over the sidecars and pins each with the sticky cookie", async () => {
    const { handler, calls } = two();
    const first = await handler(socketRequest());
    const second = await handler(socketRequest());
    expect(calls.map((c) => c.url.origin)).toEqual([SIDECAR, SIDECAR_B]);
    const cookies = [first, second].map((r) => r.headers.getSetCookie().find((c) => c.startsWith("conduit-sidecar="))!);
    expect(cookies[0]).toMatch(/^conduit-sidecar=[0-9a-f]{8}; Path=\/socket\.io\/; HttpOnly; SameSite=Lax$/);
    expect(cookies[0]).not.toBe(cookies[1]);
    await handler.close();
  });

  it("sends every polling request and the WebSocket upgrade of a browser to the sidecar its cookie names", async () => {
    const { handler, calls } = two();
    await handler(socketRequest());
    const pinned = (await handler(socketRequest())).headers.getSetCookie()[0]!.split(";")[0]!;
    for (let i = 0; i < 5; i++) {
      const res = await handler(socketRequest(`EIO=4&transport=polling&sid=s${i}`, { cookie: `${COOKIE}; ${pinned}` }));
      expect(res.headers.getSetCookie()).toEqual([]);
    }
    expect(calls.slice(2).map((c) => c.url.origin)).toEqual(Array(5).fill(SIDECAR_B));
    const upgrade = handler.upgrade(
      new Request(`${PUBLIC}/socket.io/?EIO=4&transport=websocket&sid=s1`, { headers: { cookie: `${COOKIE}; ${pinned}`, origin: PUBLIC } }),
    );
    expect(upgrade).toMatchObject({ ok: true, target: SIDECAR_B });
    await handler.close();
  });

  it("sets no cookie with the single sidecar of a default start", async () => {
    const { handler } = makeEdge();
    const res = await handler(socketRequest());
    expect(res.headers.getSetCookie()).toEqual([]);
    await handler.close();
  });
});
