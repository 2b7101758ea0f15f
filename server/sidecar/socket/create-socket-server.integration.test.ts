import { encode } from "next-auth/jwt";
import pino from "pino";
import { io as connect, type Socket } from "socket.io-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mintSocketToken } from "@/server/shared/socket-token";
import { createSocketServer, type SocketServer } from "./create-socket-server";

const secret = "integration-secret-".padEnd(40, "x");
const users = new Map([["u1", { id: "u1", email: "a@example.test", name: "A" }]]);
const origin = "http://127.0.0.1:3999";

let server: SocketServer;
let url: string;
const sockets: Socket[] = [];

beforeAll(async () => {
  server = createSocketServer({ secret, allowedOrigins: [origin], findUser: async (id) => users.get(id), log: pino({ level: "silent" }) });
  const port = await server.listen(0, "127.0.0.1");
  url = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  for (const s of sockets) s.close();
  await server.close();
});

function open(opts: { cookie?: string; origin?: string; token?: string; transport?: "websocket" | "polling" }): Socket {
  const headers: Record<string, string> = {};
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

async function sessionCookie(uid: string): Promise<string> {
  const token = await encode({ token: { uid, email: "a@example.test" }, secret });
  return `next-auth.session-token=${token}`;
}

describe("sidecar handshake", () => {
  it("accepts a valid session cookie from the allowed origin and answers commands", async () => {
    const socket = open({ cookie: await sessionCookie("u1"), origin });
    expect(await outcome(socket)).toEqual({ connected: true });
    const ack = await socket.emitWithAck("system:whoami", {});
    expect(ack).toEqual({ ok: true, data: users.get("u1") });
  });

  it("accepts a short-lived socket token instead of the cookie", async () => {
    const socket = open({ token: await mintSocketToken(secret, "u1", 60), origin });
    expect(await outcome(socket)).toEqual({ connected: true });
  });

  it("refuses a socket without a session", async () => {
    expect(await outcome(open({ origin }))).toEqual({ connected: false, error: "unauthorized" });
  });

  it("refuses a forged cookie and a deleted user", async () => {
    expect(await outcome(open({ cookie: "next-auth.session-token=forged", origin }))).toMatchObject({ connected: false, error: "unauthorized" });
    expect(await outcome(open({ cookie: await sessionCookie("gone"), origin }))).toMatchObject({ connected: false, error: "unauthorized" });
  });

  it("refuses a foreign Origin before authentication, on both transports", async () => {
    const cookie = await sessionCookie("u1");
    for (const transport of ["websocket", "polling"] as const) {
      const result = await outcome(open({ cookie, origin: "http://evil.example", transport }));
      expect(result.connected).toBe(false);
    }
    expect((await outcome(open({ cookie }))).connected).toBe(false);
  });

  it("answers an invalid payload with invalid_payload and stays usable", async () => {
    const socket = open({ cookie: await sessionCookie("u1"), origin });
    await outcome(socket);
    const bad = await socket.emitWithAck("system:whoami", { unexpected: true });
    expect(bad).toMatchObject({ ok: false, error: { code: "invalid_payload" } });
    expect(await socket.emitWithAck("system:whoami", {})).toMatchObject({ ok: true });
  });
});
