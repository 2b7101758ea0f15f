// Socket.IO's polling transport from a browser carries no Origin on its GETs. The sidecar's port
// answers only what the real edge in front vouches for: with or without an Origin, a socket
// opened straight at the sidecar (a session on the same machine) is refused.
import { encode } from "next-auth/jwt";
import pino from "pino";
import { io as connect, type Socket } from "socket.io-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createEdgeHandler } from "@/server/edge-proxy/handler";
import { startEdgeServer, type EdgeServer } from "@/server/edge-proxy/node-adapter";
import { deriveEdgeVouch } from "@/server/shared/edge-vouch";
import { createSocketServer, type SocketServer } from "./create-socket-server";

const secret = "edge-polling-secret-".padEnd(40, "x");
const users = new Map([["u1", { id: "u1", email: "a@example.test", name: "A", disabledAt: null, sessionVersion: 0 }]]);
/** The origin people type (the edge's own address differs; the sidecar knows only this one). */
const publicOrigin = "http://conduit.test";

let sidecar: SocketServer;
let edge: EdgeServer;
let sidecarUrl: string;
let edgeUrl: string;
const sockets: Socket[] = [];

beforeAll(async () => {
  sidecar = createSocketServer({
    secret,
    allowedOrigins: [publicOrigin],
    findUser: async (id) => users.get(id),
    log: pino({ level: "silent" }),
  });
  sidecarUrl = `http://127.0.0.1:${await sidecar.listen(0, "127.0.0.1")}`;
  // a free port, so the edge knows it listens there (127.0.0.1 at it is the public name's loopback twin)
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const port = (probe.address() as AddressInfo).port;
  await new Promise((resolve) => probe.close(resolve));
  const handler = createEdgeHandler({
    nextOrigin: "http://127.0.0.1:9",
    sidecarOrigin: sidecarUrl,
    publicOrigin,
    listenPort: port,
    fetch: globalThis.fetch,
    rateLimit: false,
    edgeVouch: await deriveEdgeVouch(secret),
  });
  edge = await startEdgeServer({ port, host: "127.0.0.1", handler });
  edgeUrl = `http://127.0.0.1:${edge.port}`;
});

afterAll(async () => {
  for (const s of sockets) s.close();
  await edge?.close();
  await sidecar?.close();
});

async function cookie(): Promise<string> {
  return `next-auth.session-token=${await encode({ token: { uid: "u1" }, secret })}`;
}

function open(url: string, headers: Record<string, string>): Socket {
  const socket = connect(url, {
    transports: ["polling"],
    extraHeaders: headers,
    reconnection: false,
    forceNew: true,
  });
  sockets.push(socket);
  return socket;
}

function outcome(socket: Socket): Promise<{ connected: true } | { connected: false; error: string }> {
  return new Promise((resolve) => {
    socket.once("connect", () => resolve({ connected: true }));
    socket.once("connect_error", (err) => resolve({ connected: false, error: err.message }));
  });
}

describe("polling without an Origin", () => {
  it("connects through the edge, which vouches for it, and answers commands", async () => {
    const socket = open(edgeUrl, { cookie: await cookie() });
    expect(await outcome(socket)).toEqual({ connected: true });
    expect(socket.io.engine.transport.name).toBe("polling");
    expect(await socket.emitWithAck("system:whoami", {})).toMatchObject({ ok: true, data: { id: "u1" } });
  });

  it("is refused directly at the sidecar, with or without a forged vouch", async () => {
    const direct = await outcome(open(sidecarUrl, { cookie: await cookie() }));
    expect(direct.connected).toBe(false);
    const forged = await outcome(open(sidecarUrl, { cookie: await cookie(), "x-conduit-edge": "forged-value" }));
    expect(forged.connected).toBe(false);
  });

  it("is refused at the edge when the Origin is foreign, vouch or not", async () => {
    const foreign = await outcome(
      open(edgeUrl, { cookie: await cookie(), origin: "http://evil.example", "x-conduit-edge": "forged-value" }),
    );
    expect(foreign.connected).toBe(false);
  });

  it("connects with the public Origin through the edge, and not directly at the sidecar", async () => {
    expect(await outcome(open(edgeUrl, { cookie: await cookie(), origin: publicOrigin }))).toEqual({ connected: true });
    expect((await outcome(open(sidecarUrl, { cookie: await cookie(), origin: publicOrigin }))).connected).toBe(false);
  });
});

describe("the sidecar's port without the edge", () => {
  it("answers 403 to Socket.IO (polling and WebSocket) and to any path; /healthz and /metrics pass the gate to their own routes", async () => {
    const vouch = await deriveEdgeVouch(secret);
    const polling = await fetch(`${sidecarUrl}/socket.io/?EIO=4&transport=polling`, { headers: { origin: publicOrigin, cookie: await cookie() } });
    expect(polling.status).toBe(403);
    expect(await polling.json()).toMatchObject({ error: { code: "forbidden" } });
    expect((await fetch(`${sidecarUrl}/anything`)).status).toBe(403);
    const ws = await outcome(
      (() => {
        const s = connect(sidecarUrl, { transports: ["websocket"], extraHeaders: { origin: publicOrigin, cookie: "x" }, reconnection: false, forceNew: true });
        sockets.push(s);
        return s;
      })(),
    );
    expect(ws.connected).toBe(false);
    // this server has no httpRoutes (main.ts adds them): past the gate, both reach the 404
    for (const path of ["/healthz", "/metrics"]) expect((await fetch(`${sidecarUrl}${path}`)).status, path).toBe(404);
    expect((await fetch(`${sidecarUrl}/anything`, { headers: { "x-conduit-edge": vouch } })).status).toBe(404);
  });
});
