import { Agent, createServer, request as httpRequest, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { gunzipSync, gzipSync } from "node:zlib";
import { Server as SocketServer } from "socket.io";
import { io as connectSocket, type Socket as ClientSocket } from "socket.io-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EdgeLogEntry } from "./edge-log";
import { createEdgeHandler } from "./handler";
import { startEdgeServer, type EdgeServer } from "./node-adapter";

const COOKIE = "next-auth.session-token=test-token";
const VOUCH = "v".repeat(43);

const listen = (server: Server) =>
  new Promise<number>((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)),
  );
const closeServer = (server: Server) =>
  new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });

/** Stands in for Next: echoes what it received, gzipped, with two cookies; echoes raw bytes after an upgrade. */
function startFakeNext(): Server {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const echo = { method: req.method, url: req.url, headers: req.headers, body: Buffer.concat(chunks).toString() };
      res.writeHead(200, {
        "content-type": "application/json",
        "content-encoding": "gzip",
        "set-cookie": ["a=1; Path=/", "b=2; Path=/; HttpOnly"],
      });
      res.end(gzipSync(JSON.stringify(echo)));
    });
  });
  server.on("upgrade", (_req: IncomingMessage, socket: Socket) => {
    socket.write("HTTP/1.1 101 Switching Protocols\r\nupgrade: echo\r\nconnection: Upgrade\r\n\r\n");
    socket.pipe(socket);
  });
  return server;
}

/** A raw HTTP upgrade request; resolves with the upgraded socket or the refusal response. */
function rawUpgrade(port: number, path: string, headers: Record<string, string> = {}) {
  return new Promise<{ socket: Socket } | { status: number; headers: IncomingMessage["headers"]; body: string }>(
    (resolve, reject) => {
      const req = httpRequest({
        host: "127.0.0.1",
        port,
        path,
        headers: {
          connection: "Upgrade",
          upgrade: "websocket",
          "sec-websocket-version": "13",
          "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==",
          ...headers,
        },
      });
      req.on("upgrade", (_res, socket) => resolve({ socket }));
      req.on("response", (res) => {
        let body = "";
        res.on("data", (c: Buffer) => (body += c.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      });
      req.on("error", reject);
      req.end();
    },
  );
}

function connected(socket: ClientSocket) {
  return new Promise<void>((resolve, reject) => {
    socket.once("connect", () => resolve());
    socket.once("connect_error", reject);
  });
}

async function deadPort(): Promise<number> {
  const server = createServer();
  const port = await listen(server);
  await closeServer(server);
  return port;
}

describe("startEdgeServer", () => {
  const next = startFakeNext();
  const sidecarHttp = createServer();
  const sidecar = new SocketServer(sidecarHttp);
  const clients: ClientSocket[] = [];
  const logs: EdgeLogEntry[] = [];
  let edge: EdgeServer;
  let base: string;

  sidecar.on("connection", (socket) => {
    socket.on("echo", (message: unknown, ack: (reply: unknown) => void) =>
      ack({ message, cookie: socket.handshake.headers.cookie, xff: socket.handshake.headers["x-forwarded-for"] }),
    );
  });

  beforeAll(async () => {
    const nextPort = await listen(next);
    const sidecarPort = await listen(sidecarHttp);
    // conduit.test is the public name; 127.0.0.1 at the port the edge listens on is its loopback twin
    const port = await deadPort();
    const handler = createEdgeHandler({
      nextOrigin: `http://127.0.0.1:${nextPort}`,
      sidecarOrigin: `http://127.0.0.1:${sidecarPort}`,
      publicOrigin: "http://conduit.test",
      listenPort: port,
      fetch: globalThis.fetch,
      log: (entry) => logs.push(entry),
      edgeVouch: VOUCH,
    });
    edge = await startEdgeServer({ port, host: "127.0.0.1", handler, log: (entry) => logs.push(entry) });
    base = `http://127.0.0.1:${edge.port}`;
  });

  afterAll(async () => {
    for (const client of clients) client.disconnect();
    await edge?.close();
    await new Promise<void>((resolve) => sidecar.close(() => resolve()));
    await closeServer(next);
  });

  const client = (options: Parameters<typeof connectSocket>[1]) => {
    const socket = connectSocket(base, { reconnection: false, forceNew: true, ...options });
    clients.push(socket);
    return socket;
  };

  it("proxies HTTP to Next with body, query, cookies and forwarding headers", async () => {
    const res = await fetch(`${base}/api/things?x=1`, {
      method: "POST",
      body: "hello",
      headers: { "x-forwarded-for": "6.6.6.6", origin: "http://conduit.test", "content-type": "application/json" },
    });
    expect(res.status).toBe(200);
    expect(res.headers.getSetCookie()).toEqual(["a=1; Path=/", "b=2; Path=/; HttpOnly"]);
    expect(res.headers.get("content-encoding")).toBeNull();
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    const echo = (await res.json()) as { method: string; url: string; body: string; headers: Record<string, string> };
    expect(echo).toMatchObject({ method: "POST", url: "/api/things?x=1", body: "hello" });
    expect(echo.headers["x-forwarded-for"]).toBe("127.0.0.1");
    expect(echo.headers["x-forwarded-host"]).toBe(`127.0.0.1:${edge.port}`);
  });

  it("keeps an idle keep-alive connection open past Node's 5 s default, so a reused one is not reset", async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const get = () =>
        new Promise<{ status: number; socket: Socket }>((resolve, reject) => {
          const req = httpRequest(`${base}/healthz`, { agent }, (res) => {
            res.resume();
            res.on("end", () => resolve({ status: res.statusCode ?? 0, socket: req.socket as Socket }));
          });
          req.on("error", reject);
          req.end();
        });
      const first = await get();
      let closed = false;
      first.socket.once("close", () => (closed = true));
      await new Promise((r) => setTimeout(r, 6_000));
      expect(closed).toBe(false);
      const second = await get();
      expect(second.status).toBe(200);
      expect(second.socket).toBe(first.socket);
    } finally {
      agent.destroy();
    }
  }, 20_000);

  it("answers /healthz itself", async () => {
    const res = await fetch(`${base}/healthz`);
    expect(await res.json()).toEqual({ ok: true });
  });

  it("carries a Socket.IO WebSocket with the session cookie to the sidecar", async () => {
    const socket = client({ transports: ["websocket"], extraHeaders: { cookie: COOKIE } });
    await connected(socket);
    const reply = (await socket.emitWithAck("echo", "hi")) as { message: string; cookie: string; xff: string };
    expect(reply).toEqual({ message: "hi", cookie: COOKIE, xff: "127.0.0.1" });
  });

  it("carries Socket.IO polling and its upgrade to WebSocket", async () => {
    const socket = client({ extraHeaders: { cookie: COOKIE } });
    await connected(socket);
    const engine = socket.io.engine;
    if (engine.transport.name !== "websocket") await new Promise((resolve) => engine.once("upgrade", resolve));
    expect(engine.transport.name).toBe("websocket");
    expect(((await socket.emitWithAck("echo", 2)) as { message: number }).message).toBe(2);
  });

  it("refuses a Socket.IO connection without a session cookie", async () => {
    const socket = client({ transports: ["websocket"] });
    await expect(connected(socket)).rejects.toThrow();
  });

  it("refuses upgrades without a cookie (401) or from a foreign origin (403) in plain HTTP", async () => {
    const noCookie = await rawUpgrade(edge.port, "/socket.io/?EIO=4&transport=websocket");
    expect(noCookie).toMatchObject({ status: 401, headers: { "content-type": "application/json; charset=utf-8" } });
    expect(JSON.parse((noCookie as { body: string }).body)).toMatchObject({ error: { code: "unauthorized" } });
    const foreign = await rawUpgrade(edge.port, "/socket.io/?EIO=4&transport=websocket", {
      cookie: COOKIE,
      origin: "http://evil.example",
    });
    expect(foreign).toMatchObject({ status: 403 });
  });

  it("vouches for what it forwards and names the client's address, replacing forged ones", async () => {
    const res = await fetch(`${base}/login`, { headers: { "x-conduit-edge": "forged", "x-conduit-client-ip": "6.6.6.6" } });
    const echo = (await res.json()) as { headers: Record<string, string> };
    expect(echo.headers["x-conduit-edge"]).toBe(VOUCH);
    expect(echo.headers["x-conduit-client-ip"]).toBe("127.0.0.1");
  });

  /** A raw request to the edge with the Host (and headers) a rebinding page's browser would send. */
  const rawRequest = (path: string, headers: Record<string, string>, method = "GET", body?: string) =>
    new Promise<{ status: number; headers: IncomingMessage["headers"]; body: string }>((resolve, reject) => {
      const req = httpRequest({ host: "127.0.0.1", port: edge.port, path, method, headers }, (res) => {
        let text = "";
        res.on("data", (c: Buffer) => (text += c.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      });
      req.on("error", reject);
      req.end(body);
    });

  it("refuses another Host with 421 on pages, polling and WebSocket upgrades, in plain text", async () => {
    const evil = `evil.example:${edge.port}`;
    const page = await rawRequest("/", { host: evil });
    expect(page.status).toBe(421);
    expect(page.headers["content-type"]).toBe("text/plain; charset=utf-8");
    expect(page.body).toMatch(/^421 Misdirected Request/);
    expect((await rawRequest("/socket.io/?EIO=4&transport=polling", { host: evil, cookie: COOKIE })).status).toBe(421);
    const upgrade = await rawUpgrade(edge.port, "/socket.io/?EIO=4&transport=websocket", { host: evil, cookie: COOKIE, origin: `http://${evil}` });
    expect(upgrade).toMatchObject({ status: 421 });
    expect((upgrade as { body: string }).body).toMatch(/^421 Misdirected Request/);
    expect(await rawUpgrade(edge.port, "/_next/webpack-hmr", { host: evil })).toMatchObject({ status: 421 });
    expect(logs).toContainEqual(expect.objectContaining({ event: "host_refused", status: 421 }));
  });

  it("refuses the first account's sign-up from a rebinding page (Host and Origin of another site): nothing reaches the web app", async () => {
    const evil = `rebind.attacker.example:${edge.port}`;
    const received: string[] = [];
    const record = (req: IncomingMessage) => received.push(req.url ?? "");
    next.on("request", record);
    try {
      const body = JSON.stringify({ email: "owner@evil.example", name: "Owner", password: "correct horse battery staple" });
      const res = await rawRequest("/api/signup", { host: evil, origin: `http://${evil}`, "content-type": "application/json" }, "POST", body);
      expect(res.status).toBe(421);
      expect(received).toEqual([]);
    } finally {
      next.off("request", record);
    }
  });

  it("forwards upgrades on other paths to Next", async () => {
    const result = await rawUpgrade(edge.port, "/_next/webpack-hmr");
    expect("socket" in result).toBe(true);
    if (!("socket" in result)) return;
    const echoed = new Promise<string>((resolve) => result.socket.once("data", (d: Buffer) => resolve(d.toString())));
    result.socket.write("ping");
    expect(await echoed).toBe("ping");
    result.socket.destroy();
  });
});

describe("startEdgeServer with its upstreams down", () => {
  let edge: EdgeServer;
  const logs: EdgeLogEntry[] = [];

  beforeAll(async () => {
    const port = await deadPort();
    const handler = createEdgeHandler({
      nextOrigin: `http://127.0.0.1:${await deadPort()}`,
      sidecarOrigin: `http://127.0.0.1:${await deadPort()}`,
      publicOrigin: `http://127.0.0.1:${port}`,
      fetch: globalThis.fetch,
      log: (entry) => logs.push(entry),
    });
    edge = await startEdgeServer({ port, host: "127.0.0.1", handler, log: (entry) => logs.push(entry) });
  });

  afterAll(() => edge?.close());

  it("serves the 502 page", async () => {
    const res = await fetch(`http://127.0.0.1:${edge.port}/`, { headers: { accept: "text/html" } });
    expect(res.status).toBe(502);
    expect(await res.text()).toContain("Conduit's web server is not answering");
    expect(logs).toContainEqual(expect.objectContaining({ event: "upstream_unavailable", upstream: "web" }));
  });

  it("answers an upgrade to a dead sidecar with 502 and closes the socket", async () => {
    const result = await rawUpgrade(edge.port, "/socket.io/?EIO=4&transport=websocket", { cookie: COOKIE });
    expect(result).toMatchObject({ status: 502 });
    expect(logs).toContainEqual(expect.objectContaining({ event: "upgrade_failed" }));
  });
});

describe("EdgeServer.close", () => {
  it("drops open WebSockets and stops listening", async () => {
    const sidecarHttp = createServer();
    const sidecar = new SocketServer(sidecarHttp);
    const sidecarPort = await listen(sidecarHttp);
    const port = await deadPort();
    const handler = createEdgeHandler({
      nextOrigin: `http://127.0.0.1:${await deadPort()}`,
      sidecarOrigin: `http://127.0.0.1:${sidecarPort}`,
      publicOrigin: `http://127.0.0.1:${port}`,
      fetch: globalThis.fetch,
    });
    const edge = await startEdgeServer({ port, host: "127.0.0.1", handler });
    const socket = connectSocket(`http://127.0.0.1:${edge.port}`, {
      transports: ["websocket"],
      extraHeaders: { cookie: COOKIE },
      reconnection: false,
      forceNew: true,
    });
    try {
      await connected(socket);
      const dropped = new Promise<string>((resolve) => socket.once("disconnect", resolve));
      const started = Date.now();
      await edge.close();
      expect(await dropped).toBe("transport close");
      expect(Date.now() - started).toBeLessThan(1_000);
      await expect(fetch(`http://127.0.0.1:${edge.port}/healthz`)).rejects.toThrow();
    } finally {
      socket.disconnect();
      await edge.close();
      await new Promise<void>((resolve) => sidecar.close(() => resolve()));
    }
  });
});

describe("startEdgeServer compression", () => {
  it("gzips a script over real HTTP, asking the upstream for identity", async () => {
    const script = `console.log(${JSON.stringify("x".repeat(50_000))});\n`;
    let askedFor: string | undefined;
    const next = createServer((req, res) => {
      askedFor = req.headers["accept-encoding"];
      res.writeHead(200, { "content-type": "application/javascript; charset=UTF-8", "content-length": Buffer.byteLength(script) });
      res.end(script);
    });
    const nextPort = await listen(next);
    const port = await deadPort();
    const edge = await startEdgeServer({
      port,
      host: "127.0.0.1",
      handler: createEdgeHandler({
        nextOrigin: `http://127.0.0.1:${nextPort}`,
        sidecarOrigin: `http://127.0.0.1:${await deadPort()}`,
        publicOrigin: `http://127.0.0.1:${port}`,
        fetch: globalThis.fetch,
        rateLimit: false,
      }),
    });
    try {
      const raw = await new Promise<{ headers: IncomingMessage["headers"]; body: Buffer }>((resolve, reject) => {
        const req = httpRequest({ host: "127.0.0.1", port: edge.port, path: "/_next/static/chunks/main.js", headers: { "accept-encoding": "gzip, deflate, br" } }, (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
        });
        req.on("error", reject);
        req.end();
      });
      expect(askedFor).toBe("identity");
      expect(raw.headers["content-encoding"]).toBe("gzip");
      expect(raw.headers.vary).toBe("Accept-Encoding");
      expect(raw.body.length).toBeLessThan(1000);
      expect(gunzipSync(raw.body).toString()).toBe(script);
    } finally {
      await edge.close();
      await closeServer(next);
    }
  });
});
