import { encode } from "next-auth/jwt";
import pino from "pino";
import { io as connect, type Socket } from "socket.io-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deriveEdgeVouch, EDGE_VOUCH_HEADER } from "@/server/shared/edge-vouch";
import { mintSocketToken } from "@/server/shared/socket-token";
import { createSocketServer, type SocketServer } from "./create-socket-server";

const secret = "integration-secret-".padEnd(40, "x");
const account = (id: string, standing: { disabledAt?: Date; sessionVersion?: number } = {}) => ({
  id,
  email: `${id}@example.test`,
  name: id.toUpperCase(),
  disabledAt: standing.disabledAt ?? null,
  sessionVersion: standing.sessionVersion ?? 0,
});
const users = new Map([
  ["u1", account("u1")],
  ["disabled", account("disabled", { disabledAt: new Date() })],
  ["moved-on", account("moved-on", { sessionVersion: 2 })],
]);
const origin = "http://127.0.0.1:3999";

let server: SocketServer;
let url: string;
const sockets: Socket[] = [];
/** What the edge adds to everything it forwards: the sidecar's port answers nothing else. */
let vouch: Record<string, string>;

beforeAll(async () => {
  vouch = { [EDGE_VOUCH_HEADER]: await deriveEdgeVouch(secret) };
  server = createSocketServer({
    secret,
    allowedOrigins: [origin],
    findUser: async (id) => users.get(id),
    log: pino({ level: "silent" }),
  });
  const port = await server.listen(0, "127.0.0.1");
  url = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  for (const s of sockets) s.close();
  await server.close();
});

function open(opts: { cookie?: string; origin?: string; token?: string; transport?: "websocket" | "polling"; vouch?: false }): Socket {
  const headers: Record<string, string> = opts.vouch === false ? {} : { ...vouch };
  if (opts.cookie) headers.cookie = opts.cookie;
  if (opts.origin) headers.origin = opts.origin;
  const socket = connect(url, {
    transports: [opts.transport ?? "websocket"],
    extraHeaders: headers,
    auth: opts.token ? { token: opts.token } : {},
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

async function sessionCookie(uid: string, sv?: number): Promise<string> {
  const token = await encode({
    token: { uid, email: `${uid}@example.test`, ...(sv === undefined ? {} : { sv }) },
    secret,
  });
  return `next-auth.session-token=${token}`;
}

describe("sidecar handshake", () => {
  it("accepts a valid session cookie from the allowed origin and answers commands", async () => {
    const socket = open({ cookie: await sessionCookie("u1"), origin });
    expect(await outcome(socket)).toEqual({ connected: true });
    const ack = await socket.emitWithAck("system:whoami", {});
    expect(ack).toEqual({ ok: true, data: { id: "u1", email: "u1@example.test", name: "U1" } });
  });

  it("accepts a short-lived socket token instead of the cookie", async () => {
    const socket = open({ token: await mintSocketToken(secret, "u1", 60), origin });
    expect(await outcome(socket)).toEqual({ connected: true });
  });

  it("refuses a socket without a session", async () => {
    expect(await outcome(open({ origin }))).toEqual({ connected: false, error: "unauthorized" });
  });

  it("refuses a forged cookie and a deleted user", async () => {
    expect(await outcome(open({ cookie: "next-auth.session-token=forged", origin }))).toMatchObject({
      connected: false,
      error: "unauthorized",
    });
    expect(await outcome(open({ cookie: await sessionCookie("gone"), origin }))).toMatchObject({
      connected: false,
      error: "unauthorized",
    });
  });

  it("refuses a disabled account and a cookie or token from before the account's last sign-out", async () => {
    expect(await outcome(open({ cookie: await sessionCookie("disabled"), origin }))).toEqual({
      connected: false,
      error: "unauthorized",
    });
    expect(await outcome(open({ cookie: await sessionCookie("moved-on", 1), origin }))).toEqual({
      connected: false,
      error: "unauthorized",
    });
    expect(await outcome(open({ token: await mintSocketToken(secret, "moved-on", 60, 1), origin }))).toEqual({
      connected: false,
      error: "unauthorized",
    });
    expect(await outcome(open({ cookie: await sessionCookie("moved-on", 2), origin }))).toEqual({ connected: true });
    expect(await outcome(open({ token: await mintSocketToken(secret, "moved-on", 60, 2), origin }))).toEqual({
      connected: true,
    });
  });

  it("refuses a foreign Origin before authentication, on both transports", async () => {
    const cookie = await sessionCookie("u1");
    for (const transport of ["websocket", "polling"] as const) {
      const result = await outcome(open({ cookie, origin: "http://evil.example", transport }));
      expect(result.connected).toBe(false);
    }
  });

  it("refuses a socket opened straight at its port, without the edge's vouch, whatever it carries", async () => {
    const cookie = await sessionCookie("u1");
    for (const transport of ["websocket", "polling"] as const) {
      expect((await outcome(open({ cookie, vouch: false, transport }))).connected, transport).toBe(false);
      expect((await outcome(open({ cookie, origin, vouch: false, transport }))).connected, transport).toBe(false);
      expect((await outcome(open({ token: await mintSocketToken(secret, "u1", 60), origin, vouch: false, transport }))).connected, transport).toBe(false);
    }
  });

  it("answers an invalid payload with invalid_payload and stays usable", async () => {
    const socket = open({ cookie: await sessionCookie("u1"), origin });
    await outcome(socket);
    const bad = await socket.emitWithAck("system:whoami", { unexpected: true });
    expect(bad).toMatchObject({ ok: false, error: { code: "invalid_payload" } });
    expect(await socket.emitWithAck("system:whoami", {})).toMatchObject({ ok: true });
  });
});

describe("sidecar shutdown", () => {
  it("closes sockets so that browsers reconnect on their own (no 'io server disconnect', which socket.io-client never retries)", async () => {
    const own = createSocketServer({
      secret,
      allowedOrigins: [origin],
      findUser: async (id) => users.get(id),
      log: pino({ level: "silent" }),
    });
    const port = await own.listen(0, "127.0.0.1");
    const socket = connect(`http://127.0.0.1:${port}`, {
      transports: ["websocket"],
      extraHeaders: { cookie: await sessionCookie("u1"), origin, ...vouch },
      reconnection: false,
      forceNew: true,
    });
    sockets.push(socket);
    expect(await outcome(socket)).toEqual({ connected: true });
    const reason = new Promise<string>((resolve) => socket.once("disconnect", (r) => resolve(r)));
    await own.close();
    // "transport close" is one of the reasons after which the client's reconnection runs.
    expect(await reason).toBe("transport close");
  });
});
