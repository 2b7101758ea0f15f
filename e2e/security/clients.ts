/**
 * Clients for the security suite: API contexts signed in through next-auth's own endpoints, and
 * Socket.IO clients that connect through the edge with a member's cookie, as a browser does.
 */
import { appendFileSync } from "node:fs";
import { expect, request as playwrightRequest, type APIRequestContext } from "@playwright/test";
import { io, type Socket } from "socket.io-client";
import { password } from "../fixtures";

export async function newClient(baseURL: string): Promise<APIRequestContext> {
  // Conduit's own pages send their origin; so does every client here
  return playwrightRequest.newContext({ baseURL, extraHTTPHeaders: { origin: new URL(baseURL).origin } });
}

export async function signUpAndIn(baseURL: string, email: string): Promise<APIRequestContext> {
  const client = await newClient(baseURL);
  const created = await client.post("/api/signup", { data: { email, password, name: email.split("@")[0] } });
  expect(created.status(), await created.text()).toBe(201);
  const csrf = (await (await client.get("/api/auth/csrf")).json()) as { csrfToken: string };
  const signedIn = await client.post("/api/auth/callback/credentials", {
    form: { csrfToken: csrf.csrfToken, email, password, callbackUrl: `${baseURL}/workspaces`, json: "true" },
  });
  expect(signedIn.status(), await signedIn.text()).toBeLessThan(400);
  const me = await client.get("/api/workspaces");
  expect(me.status(), "signed in").toBe(200);
  // every session cookie made here is one more secret the suite scans the logs for
  const tokens = process.env.CONDUIT_SECURITY_TOKENS;
  if (tokens) for (const c of (await client.storageState()).cookies) if (c.name.includes("session-token")) appendFileSync(tokens, `${c.value}\n`);
  return client;
}

export async function userIdOf(owner: APIRequestContext, slug: string, email: string): Promise<string> {
  const res = await owner.get(`/api/workspaces/${slug}/members`);
  const { data } = (await res.json()) as { data: { userId: string; email: string }[] };
  const found = data.find((m) => m.email === email);
  if (!found) throw new Error(`${email} is not a member of ${slug}`);
  return found.userId;
}

export async function cookieHeader(client: APIRequestContext): Promise<string> {
  const { cookies } = await client.storageState();
  return cookies.map((c) => `${c.name}=${c.value}`).join("; ");
}

/**
 * A Socket.IO client through the edge. `origin: null` sends none; `headers` adds any (for
 * forged forwarding headers).
 */
export function connect(
  baseURL: string,
  cookie: string | undefined,
  options: { origin?: string | null; headers?: Record<string, string> } = {},
): Promise<Socket | Error> {
  const origin = options.origin === undefined ? new URL(baseURL).origin : options.origin;
  return new Promise((resolve) => {
    const socket = io(baseURL, {
      transports: ["websocket"],
      reconnection: false,
      extraHeaders: { ...(origin === null ? {} : { origin }), ...(cookie ? { cookie } : {}), ...options.headers },
    });
    socket.once("connect", () => resolve(socket));
    socket.once("connect_error", (err) => {
      socket.close();
      resolve(err);
    });
  });
}

export type AckResult = { ok: true; data: unknown } | { ok: false; error: { code: string; message: string } };

export function emit(socket: Socket, event: string, payload: unknown): Promise<AckResult> {
  return socket.timeout(15_000).emitWithAck(event, payload) as Promise<AckResult>;
}

/** A client-made command id, unique per call. */
export const commandId = () => `sec-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
