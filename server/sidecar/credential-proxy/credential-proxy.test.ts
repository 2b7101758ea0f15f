import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { presentedToken, startCredentialProxy, upstreamUrl, type CredentialProxy } from "./credential-proxy";

interface Upstream {
  url: string;
  seen: { path: string; headers: http.IncomingHttpHeaders; body: string }[];
  /** Resolves the pending SSE response's second event. */
  release(): void;
  close(): Promise<void>;
}

// An upstream that records what it got and streams two SSE events, the second one on `release()`.
async function startUpstream(): Promise<Upstream> {
  const seen: Upstream["seen"] = [];
  let release = () => undefined as void;
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString()));
    req.on("end", () => {
      seen.push({ path: req.url ?? "", headers: req.headers, body });
      res.writeHead(200, { "content-type": "text/event-stream", "x-request-id": "req_1" });
      res.write("event: message_start\ndata: {}\n\n");
      release = () => res.end("event: message_stop\ndata: {}\n\n");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/gateway`,
    seen,
    release: () => release(),
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

let upstream: Upstream | undefined;
let proxy: CredentialProxy | undefined;
afterEach(async () => {
  await proxy?.close();
  await upstream?.close();
  proxy = upstream = undefined;
});

async function setup() {
  upstream = await startUpstream();
  proxy = await startCredentialProxy({ upstream: upstream.url, credential: { apiKey: "sk-ant-operator-real" } });
  return { upstream, proxy };
}

describe("the credential proxy", () => {
  it("swaps a live token for the real key and streams each event as it comes", async () => {
    const { upstream, proxy } = await setup();
    const grant = proxy.issue("session-1");
    expect(grant.env.ANTHROPIC_BASE_URL).toBe(proxy.url);
    expect(grant.env.ANTHROPIC_API_KEY).toBe(grant.token);
    const response = await fetch(`${proxy.url}/v1/messages?beta=true`, {
      method: "POST",
      headers: { "x-api-key": grant.token, "content-type": "application/json", "anthropic-version": "2023-06-01" },
      body: JSON.stringify({ model: "m" }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-request-id")).toBe("req_1");
    const reader = response.body!.getReader();
    // The first event arrives while the upstream still holds the second: nothing is buffered.
    const first = new TextDecoder().decode((await reader.read()).value);
    expect(first).toContain("message_start");
    upstream.release();
    let rest = "";
    for (let part = await reader.read(); !part.done; part = await reader.read()) rest += new TextDecoder().decode(part.value);
    expect(rest).toContain("message_stop");

    expect(upstream.seen).toHaveLength(1);
    expect(upstream.seen[0]).toMatchObject({ path: "/gateway/v1/messages?beta=true", body: '{"model":"m"}' });
    expect(upstream.seen[0]!.headers["x-api-key"]).toBe("sk-ant-operator-real");
    expect(upstream.seen[0]!.headers["anthropic-version"]).toBe("2023-06-01");
    expect(JSON.stringify(upstream.seen[0]!.headers)).not.toContain(grant.token);
    const usage = proxy.usageOf("session-1");
    expect(usage).toMatchObject({ requests: 1, bytesUp: 13, refused: 0 });
    expect(usage.bytesDown).toBe(first.length + rest.length);
  });

  it("stamps each stage of a forwarded exchange for the latency trace, once each, in order", async () => {
    upstream = await startUpstream();
    const stages: string[] = [];
    proxy = await startCredentialProxy({
      upstream: upstream.url,
      credential: { apiKey: "sk-ant-operator-real" },
      trace: (stage, fields) => stages.push(`${stage} ${fields.sessionId} ${fields.path}`),
    });
    const grant = proxy.issue("session-7");
    const response = await fetch(`${proxy.url}/v1/messages?beta=true`, {
      method: "POST",
      headers: { "x-api-key": grant.token, "content-type": "application/json" },
      body: JSON.stringify({ model: "m" }),
    });
    const reader = response.body!.getReader();
    await reader.read();
    upstream.release();
    while (!(await reader.read()).done);
    expect(stages).toEqual(
      ["proxy-request", "proxy-request-sent", "proxy-response", "proxy-first-chunk"].map((s) => `${s} session-7 /v1/messages?beta=true`),
    );
  });

  it("accepts the token as a bearer token too, and sends an auth token upstream as one", async () => {
    upstream = await startUpstream();
    proxy = await startCredentialProxy({ upstream: upstream.url, credential: { authToken: "gw-secret" } });
    const grant = proxy.issue("s");
    const response = await fetch(`${proxy.url}/v1/messages`, { method: "POST", headers: { authorization: `Bearer ${grant.token}` }, body: "{}" });
    upstream.release();
    await response.text();
    expect(response.status).toBe(200);
    expect(upstream.seen[0]!.headers.authorization).toBe("Bearer gw-secret");
    expect(upstream.seen[0]!.headers["x-api-key"]).toBeUndefined();
  });

  it("answers 401 in the API's shape to a missing, unknown or revoked token, and never calls upstream", async () => {
    const { upstream, proxy } = await setup();
    const grant = proxy.issue("session-2");
    grant.revoke();
    grant.revoke(); // idempotent
    expect(proxy.liveTokens).toBe(0);
    const attempts: Record<string, string>[] = [{}, { "x-api-key": "sk-ant-guess" }, { "x-api-key": grant.token }, { authorization: "Bearer sk-ant-operator-real" }];
    for (const headers of attempts) {
      const response = await fetch(`${proxy.url}/v1/messages`, { method: "POST", headers, body: "{}" });
      expect(response.status).toBe(401);
      expect(await response.json()).toEqual({ type: "error", error: { type: "authentication_error", message: expect.any(String) } });
    }
    expect(upstream.seen).toEqual([]);
    expect(proxy.usageOf("session-2")).toMatchObject({ requests: 0, refused: 1 });
  });

  it("answers 502 in the API's shape when the upstream cannot be reached", async () => {
    proxy = await startCredentialProxy({ upstream: "http://127.0.0.1:1", credential: { apiKey: "k" } });
    const response = await fetch(`${proxy.url}/v1/messages`, { method: "POST", headers: { "x-api-key": proxy.issue("s").token }, body: "{}" });
    expect(response.status).toBe(502);
    expect(await response.json()).toMatchObject({ type: "error", error: { type: "api_error" } });
  });

  it("gives every spawn its own token", async () => {
    const { proxy } = await setup();
    const a = proxy.issue("s");
    const b = proxy.issue("s");
    expect(a.token).not.toBe(b.token);
    expect(a.token.length).toBeGreaterThan(40);
    a.revoke();
    expect(proxy.liveTokens).toBe(1);
  });
});

describe("presentedToken and upstreamUrl", () => {
  it("reads x-api-key first, then a bearer token", () => {
    expect(presentedToken({ "x-api-key": "a", authorization: "Bearer b" })).toBe("a");
    expect(presentedToken({ authorization: "Bearer b" })).toBe("b");
    expect(presentedToken({ authorization: "Basic b" })).toBeUndefined();
    expect(presentedToken({})).toBeUndefined();
  });

  it("keeps the upstream's path as a prefix and the request's query", () => {
    expect(upstreamUrl(new URL("https://api.anthropic.com"), "/v1/messages?beta=true").href).toBe("https://api.anthropic.com/v1/messages?beta=true");
    expect(upstreamUrl(new URL("https://gw.example/anthropic/"), "/v1/messages").href).toBe("https://gw.example/anthropic/v1/messages");
    // A request path cannot change the host.
    expect(upstreamUrl(new URL("https://gw.example"), "//evil.example/v1").host).toBe("gw.example");
  });
});
