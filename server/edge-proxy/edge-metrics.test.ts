import { describe, expect, it } from "vitest";
import { parsePrometheus } from "../../test/prometheus-text";
import { createEdgeHandler } from "./handler";

const PUBLIC = "http://localhost:3000";
const TOKEN = "metrics-token-0123456789";

const bearer = { authorization: `Bearer ${TOKEN}` };

function edge(options: { trustProxy?: boolean; token?: string } = {}) {
  const forwarded: string[] = [];
  const handler = createEdgeHandler({
    nextOrigin: "http://127.0.0.1:3001",
    sidecarOrigin: "http://127.0.0.1:3002",
    publicOrigin: PUBLIC,
    rateLimit: false,
    trustProxy: options.trustProxy ?? false,
    ...(options.token ? { metricsToken: options.token } : {}),
    fetch: (async (input: RequestInfo | URL) => {
      forwarded.push(String(input));
      return new Response(String(input).includes("missing") ? "no" : "ok", { status: String(input).includes("missing") ? 404 : 200 });
    }) as typeof fetch,
  });
  return { handler, forwarded };
}

describe("the edge's /metrics", () => {
  it("counts requests by upstream and status class, with a latency histogram, for the token's holder", async () => {
    const { handler } = edge({ token: TOKEN });
    await handler(new Request(`${PUBLIC}/`), { clientIp: "10.0.0.5" });
    await handler(new Request(`${PUBLIC}/missing`), { clientIp: "10.0.0.5" });
    await handler(new Request(`${PUBLIC}/healthz`), { clientIp: "10.0.0.5" });
    await handler(new Request(`${PUBLIC}/socket.io/?EIO=4&transport=polling`, { headers: { cookie: "next-auth.session-token=a" } }), { clientIp: "10.0.0.5" });
    handler.upgrade(new Request(`${PUBLIC}/socket.io/?EIO=4&transport=websocket`), { clientIp: "10.0.0.5" });
    const res = await handler(new Request(`${PUBLIC}/metrics`, { headers: bearer }), { clientIp: "10.0.0.5" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    const samples = parsePrometheus(await res.text());
    expect(samples.get('conduit_edge_requests_total{status="2xx",upstream="web"}')).toBe(1);
    expect(samples.get('conduit_edge_requests_total{status="4xx",upstream="web"}')).toBe(1);
    expect(samples.get('conduit_edge_requests_total{status="2xx",upstream="edge"}')).toBe(1);
    expect(samples.get('conduit_edge_requests_total{status="2xx",upstream="sidecar"}')).toBe(1);
    expect(samples.get('conduit_edge_request_duration_seconds_count{upstream="web"}')).toBe(2);
    expect(samples.get('conduit_edge_request_duration_seconds_bucket{le="+Inf",upstream="web"}')).toBe(2);
    expect(samples.get('conduit_edge_upgrades_total{result="refused",upstream="sidecar"}')).toBe(1);
    expect(samples.get('conduit_edge_sidecar_up{sidecar="http://127.0.0.1:3002"}')).toBe(1);
  });

  it("says which sidecars are in the rotation", async () => {
    const alive = "http://127.0.0.1:3002";
    const dead = "http://127.0.0.1:3012";
    const handler = createEdgeHandler({
      nextOrigin: "http://127.0.0.1:3001",
      sidecarOrigin: [alive, dead],
      publicOrigin: PUBLIC,
      metricsToken: TOKEN,
      healthCheck: { intervalMs: 60_000, fallAfter: 1 },
      fetch: (async (input: RequestInfo | URL) => {
        if (String(input).startsWith(dead)) throw new TypeError("fetch failed");
        return new Response("{}");
      }) as typeof fetch,
    });
    await handler.sidecars.checkNow();
    const samples = parsePrometheus(await (await handler(new Request(`${PUBLIC}/metrics`, { headers: bearer }))).text());
    expect(samples.get(`conduit_edge_sidecar_up{sidecar="${alive}"}`)).toBe(1);
    expect(samples.get(`conduit_edge_sidecar_up{sidecar="${dead}"}`)).toBe(0);
    await handler.close();
  });

  it("answers 404 without the token, to a loopback peer too, and never forwards /metrics to the web app", async () => {
    const { handler, forwarded } = edge({ token: TOKEN });
    for (const path of ["/metrics", "/metrics/x", "/metrics?a=1"]) {
      for (const clientIp of ["203.0.113.9", "127.0.0.1", "::1"]) {
        const res = await handler(new Request(`${PUBLIC}${path}`), { clientIp });
        expect(res.status, `${path} from ${clientIp}`).toBe(404);
      }
    }
    const untokened = edge();
    expect((await untokened.handler(new Request(`${PUBLIC}/metrics`), { clientIp: "127.0.0.1" })).status).toBe(404);
    const wrong = await handler(new Request(`${PUBLIC}/metrics`, { headers: { authorization: "Bearer nope-nope-nope-nope" } }), { clientIp: "203.0.113.9" });
    expect(wrong.status).toBe(404);
    expect(forwarded).toEqual([]);
    expect(untokened.forwarded).toEqual([]);
  });

  it("answers the token's holder from anywhere, and only the token behind a trusted proxy", async () => {
    const { handler } = edge({ token: TOKEN, trustProxy: true });
    const viaProxy = await handler(new Request(`${PUBLIC}/metrics`), { clientIp: "127.0.0.1" });
    expect(viaProxy.status).toBe(404);
    const withToken = await handler(new Request(`${PUBLIC}/metrics`, { headers: bearer }), { clientIp: "127.0.0.1" });
    expect(withToken.status).toBe(200);
    expect(await withToken.text()).toContain("# TYPE conduit_edge_requests_total counter");
  });
});
