// Socket.IO's polling transport from a browser carries no Origin on its GETs: the sidecar lets
// such a request in only when the real edge in front vouches for it.
import { encode } from "next-auth/jwt";
import pino from "pino";
import { io as connect, type Socket } from "socket.io-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
  const handler = createEdgeHandler({
    nextOrigin: "http://127.0.0.1:9",
    sidecarOrigin: sidecarUrl,
    publicOrigin,
    fetch: globalThis.fetch,
    rateLimit: false,
    edgeVouch: await deriveEdgeVouch(secret),
  });
  edge = await startEdgeServer({ port: 0, host: "127.0.0.1", handler });
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

  it("still connects with the public Origin, directly and through the edge", async () => {
    expect(await outcome(open(sidecarUrl, { cookie: await cookie(), origin: publicOrigin }))).toEqual({
      connected: true,
    });
    expect(await outcome(open(edgeUrl, { cookie: await cookie(), origin: publicOrigin }))).toEqual({ connected: true });
  });
});
