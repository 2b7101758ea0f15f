import { mkdtemp, rm } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo, LookupFunction, Socket } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { egressRefusal, parseAuthority, startEgressProxy, type EgressProxy } from "./egress-proxy";

describe("parseAuthority", () => {
  it("reads host:port and bracketed IPv6", () => {
    expect(parseAuthority("Example.com:443")).toEqual({ host: "example.com", port: 443 });
    expect(parseAuthority("[::1]:8080")).toEqual({ host: "[::1]", port: 8080 });
  });
  it.each(["example.com", "example.com:0", "example.com:99999", ":443", "a:b:c"])("refuses %j", (authority) => {
    expect(parseAuthority(authority)).toBeUndefined();
  });
});

describe("egressRefusal", () => {
  it("says why", () => {
    expect(egressRefusal("api.github.com", ["*.github.com"])).toBeUndefined();
    expect(egressRefusal("evil.com", ["*.github.com"])).toMatch(/not on this workspace's network allow-list/);
    expect(egressRefusal("[::1]", ["*.github.com"])).toMatch(/IP address/);
    expect(egressRefusal("", ["*.github.com"])).toMatch(/no host/);
  });
});

describe("the egress proxy", () => {
  let dir: string;
  let upstream: http.Server;
  let port: number;
  let proxy: EgressProxy | undefined;
  const logged: Record<string, unknown>[] = [];
  const lookup: LookupFunction = (hostname, options, callback) => {
    if (hostname.endsWith(".test")) {
      if ((options as { all?: boolean }).all) (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address: "127.0.0.1", family: 4 }]);
      else callback(null, "127.0.0.1", 4);
    } else callback(Object.assign(new Error(`ENOTFOUND ${hostname}`), { code: "ENOTFOUND" }), "", 0);
  };

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "conduit-egress-test-"));
    upstream = http.createServer((req, res) => res.end(`upstream saw ${req.method} ${req.url} host=${req.headers.host} proxy-auth=${req.headers["proxy-authorization"] ?? "none"}`));
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
    port = (upstream.address() as AddressInfo).port;
    logged.length = 0;
    proxy = await startEgressProxy({ sessionId: "s-1", policy: { mode: "allowlist", domains: ["ok.test"] }, socketPath: path.join(dir, "egress.sock"), lookup, log: (fields) => logged.push(fields) });
  });
  afterEach(async () => {
    await proxy?.close();
    upstream.closeAllConnections();
    await new Promise((resolve) => upstream.close(resolve));
    await rm(dir, { recursive: true, force: true });
  });

  const viaProxy = (target: string, headers: Record<string, string> = {}) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request({ socketPath: proxy!.socketPath, path: target, headers }, (res) => {
        let body = "";
        res.on("data", (c: Buffer) => (body += c.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on("error", reject);
      req.end();
    });

  const connect = (authority: string) =>
    new Promise<{ status: number; socket: Socket; head: string }>((resolve, reject) => {
      const req = http.request({ socketPath: proxy!.socketPath, method: "CONNECT", path: authority });
      req.on("connect", (res, socket, head) => resolve({ status: res.statusCode ?? 0, socket, head: head.toString() }));
      req.on("response", (res) => {
        let body = "";
        res.on("data", (c: Buffer) => (body += c.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, socket: res.socket, head: body }));
      });
      req.on("error", reject);
      req.end();
    });

  it("forwards plain HTTP to a listed host, without the proxy's own headers", async () => {
    const answer = await viaProxy(`http://ok.test:${port}/path?q=1`, { "proxy-authorization": "Basic x" });
    expect(answer).toEqual({ status: 200, body: `upstream saw GET /path?q=1 host=ok.test:${port} proxy-auth=none` });
    expect(proxy!.refusals).toEqual([]);
  });

  it("refuses an unlisted host and an IP literal with 403 and a reason, and logs each with the session", async () => {
    const unlisted = await viaProxy(`http://other.test:${port}/`);
    expect(unlisted.status).toBe(403);
    expect(unlisted.body).toMatch(/other\.test is not on this workspace's network allow-list/);
    const literal = await viaProxy(`http://127.0.0.1:${port}/`);
    expect(literal.status).toBe(403);
    expect(literal.body).toMatch(/127\.0\.0\.1 is an IP address/);
    expect(proxy!.refusals.map((r) => r.host)).toEqual(["other.test", "127.0.0.1"]);
    expect(logged).toEqual([expect.objectContaining({ sessionId: "s-1", host: "other.test" }), expect.objectContaining({ sessionId: "s-1", host: "127.0.0.1" })]);
  });

  it("answers 400 to a request that is not an absolute http URL", async () => {
    expect((await viaProxy("/relative")).status).toBe(400);
  });

  it("tunnels CONNECT to a listed host and refuses the rest", async () => {
    const tunnel = await connect(`ok.test:${port}`);
    expect(tunnel.status).toBe(200);
    const body = await new Promise<string>((resolve) => {
      let text = "";
      tunnel.socket.on("data", (c: Buffer) => (text += c.toString()));
      tunnel.socket.on("end", () => resolve(text));
      tunnel.socket.write("GET /through HTTP/1.1\r\nhost: ok.test\r\nconnection: close\r\n\r\n");
    });
    expect(body).toContain("upstream saw GET /through host=ok.test");
    const refused = await connect(`evil.test:${port}`);
    expect(refused.status).toBe(403);
    const literal = await connect(`[::1]:${port}`);
    expect(literal.status).toBe(403);
    expect(proxy!.refusals.map((r) => r.host)).toEqual(["evil.test", "[::1]"]);
  });

  it("answers 502 when a listed host cannot be reached", async () => {
    const closed = await viaProxy(`http://ok.test:1/`);
    expect(closed.status).toBe(502);
  });
});

describe("the egress proxy of an open workspace", () => {
  let dir: string;
  // The "internet": a server on a loopback alias the test's hook treats as public.
  let world: http.Server;
  // The host's own loopback service (the web app's /metrics, say).
  let local: http.Server;
  let worldPort: number;
  let localPort: number;
  let proxy: EgressProxy | undefined;
  let lookups = 0;
  const lookup: LookupFunction = (hostname, options, callback) => {
    lookups++;
    const table: Record<string, string> = { "public.test": "127.0.0.2", "metadata.test": "169.254.169.254", "private.test": "10.0.0.7", "loopback.test": "127.0.0.1", localhost: "127.0.0.1" };
    // A rebinding name: public for the first answer, loopback for every later one.
    if (hostname === "rebind.test") table[hostname] = lookups === 1 ? "127.0.0.2" : "127.0.0.1";
    const address = table[hostname];
    if (address === undefined) return callback(Object.assign(new Error(`ENOTFOUND ${hostname}`), { code: "ENOTFOUND" }), "", 0);
    if ((options as { all?: boolean }).all) (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address, family: 4 }]);
    else callback(null, address, 4);
  };

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "conduit-egress-open-"));
    world = http.createServer((req, res) => res.end(`world saw ${req.url} host=${req.headers.host}`));
    local = http.createServer((_req, res) => res.end("LOCAL SERVICE"));
    await new Promise<void>((resolve) => world.listen(0, "127.0.0.2", resolve));
    worldPort = (world.address() as AddressInfo).port;
    // The same port on 127.0.0.1, so that a rebinding would land here.
    await new Promise<void>((resolve) => local.listen(worldPort, "127.0.0.1", resolve));
    localPort = worldPort;
    lookups = 0;
    proxy = await startEgressProxy({ sessionId: "s-open", policy: { mode: "open" }, socketPath: path.join(dir, "egress.sock"), lookup, treatAsPublic: (a) => a === "127.0.0.2" });
  });
  afterEach(async () => {
    await proxy?.close();
    for (const server of [world, local]) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
    await rm(dir, { recursive: true, force: true });
  });

  const viaProxy = (target: string) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request({ socketPath: proxy!.socketPath, path: target }, (res) => {
        let body = "";
        res.on("data", (c: Buffer) => (body += c.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on("error", reject);
      req.end();
    });
  const connectStatus = (authority: string) =>
    new Promise<{ status: number; socket: Socket }>((resolve, reject) => {
      const req = http.request({ socketPath: proxy!.socketPath, method: "CONNECT", path: authority });
      req.on("connect", (res, socket) => resolve({ status: res.statusCode ?? 0, socket }));
      req.on("response", (res) => {
        res.resume();
        resolve({ status: res.statusCode ?? 0, socket: res.socket });
      });
      req.on("error", reject);
      req.end();
    });

  it("reaches a public address by plain HTTP and by CONNECT", async () => {
    expect(await viaProxy(`http://public.test:${worldPort}/a`)).toEqual({ status: 200, body: `world saw /a host=public.test:${worldPort}` });
    const tunnel = await connectStatus(`public.test:${worldPort}`);
    expect(tunnel.status).toBe(200);
    tunnel.socket.destroy();
    expect(proxy!.refusals).toEqual([]);
  });

  it("refuses loopback, private and metadata addresses, by name and by literal, in every spelling", async () => {
    for (const target of [
      `http://127.0.0.1:${localPort}/`,
      `http://127.1:${localPort}/`,
      `http://[::ffff:127.0.0.1]:${localPort}/`,
      `http://localhost:${localPort}/`,
      `http://loopback.test:${localPort}/`,
      "http://169.254.169.254/latest/meta-data/",
      "http://metadata.test/latest/meta-data/",
      "http://private.test/",
      "http://10.0.0.7/",
    ]) {
      const answer = await viaProxy(target);
      expect([target, answer.status]).toEqual([target, 403]);
      expect(answer.body).toMatch(/Conduit refused this connection: .*(not a public address|address of this host)/);
    }
    for (const authority of [`127.0.0.1:${localPort}`, `[::1]:${localPort}`, `localhost:${localPort}`, "metadata.test:443", "169.254.169.254:80"]) {
      expect([authority, (await connectStatus(authority)).status]).toEqual([authority, 403]);
    }
    expect(proxy!.refusals.map((r) => r.host)).toEqual(expect.arrayContaining(["127.0.0.1", "localhost", "metadata.test", "169.254.169.254", "private.test", "[::1]"]));
  });

  it("connects to the address it checked: a name that rebinds to loopback after the check still lands on the public one", async () => {
    const answer = await viaProxy(`http://rebind.test:${worldPort}/r`);
    expect(answer).toEqual({ status: 200, body: `world saw /r host=rebind.test:${worldPort}` });
    expect(lookups).toBe(1);
    const tunnel = await connectStatus(`rebind.test:${worldPort}`);
    expect(tunnel.status).toBe(403); // the second resolution is loopback: refused, never connected
    expect(lookups).toBe(2);
  });

  it("answers 502, not a refusal, for a name that does not resolve", async () => {
    const answer = await viaProxy("http://nowhere.test/");
    expect(answer.status).toBe(502);
    expect(answer.body).toMatch(/could not be resolved \(ENOTFOUND\)/);
    expect(proxy!.refusals).toEqual([]);
  });
});
