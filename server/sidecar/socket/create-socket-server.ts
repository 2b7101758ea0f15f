/**
 * The sidecar's Socket.IO server. Its port answers only requests the edge vouched for
 * (`port-gate.ts`: a session on the same machine cannot talk to it directly). The handshake is
 * refused before any handler runs when the Origin is not allowed (allowRequest) or no valid
 * session comes with it (middleware): either
 * next-auth's session cookie or a short-lived socket token minted by the web process. A session
 * is valid while its account is enabled and its version (`sv`) is the account's current one;
 * the revocation sweep (`revocation-sweep.ts`) applies the same rule to sockets already open.
 */
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from "node:http";
import { maxPromptImageTotalBytes } from "@/server/shared/wire/session-controls";
import { decode } from "next-auth/jwt";
import type { Logger } from "pino";
import { Server, type Socket } from "socket.io";
import { isSessionCurrent, sessionVersionOf, type AccountStanding } from "@/server/domain/account/session-validity";
import { verifySocketToken } from "@/server/shared/socket-token";
import { ClientCommand, HandshakeError, ZWhoamiPayload, type SocketUser } from "@/server/shared/wire/events";
import { handleCommand } from "@/server/sidecar/socket/handle-command";
import { readSessionCookie } from "@/server/sidecar/socket/read-session-cookie";
import { deriveEdgeVouch, EDGE_VOUCH_HEADER, isEdgeVouch } from "@/server/shared/edge-vouch";
import { gatePort } from "@/server/sidecar/socket/port-gate";

export interface SocketServerDeps {
  secret: string;
  /** Origins (scheme://host:port) allowed to open a socket. */
  allowedOrigins: readonly string[];
  /** Looks a user up by id, with the account's standing; undefined when the account no longer exists. */
  findUser: (id: string) => Promise<SocketAccount | undefined>;
  log: Logger;
  /** Answers the sidecar's own routes (health, metrics); false leaves the request to the 404. */
  httpRoutes?: (req: IncomingMessage, res: ServerResponse) => boolean;
}

export interface SocketServer {
  io: Server;
  http: HttpServer;
  listen(port: number, host: string): Promise<number>;
  close(): Promise<void>;
}

/** A user with the fields that decide whether their sessions are still valid. */
export type SocketAccount = SocketUser & AccountStanding;

/** What the handshake leaves on `socket.data`. */
export interface SocketData {
  user: SocketUser;
  /** The session version of the cookie or token the socket was opened with. */
  sessionVersion: number;
}

export function createSocketServer(deps: SocketServerDeps): SocketServer {
  const http = createServer((req, res) => {
    if (deps.httpRoutes?.(req, res)) return;
    res.writeHead(404, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: { code: "not_found", message: "Only Socket.IO is served here." } }));
  });
  const allowed = new Set(deps.allowedOrigins.map((o) => new URL(o).origin));
  // Browsers omit Origin on same-origin GETs (the polling transport): such a request is let in
  // only when the edge, which checked it, vouches for it with a value derived from the secret.
  const edgeVouch = deriveEdgeVouch(deps.secret);
  let expectedVouch: string | undefined;
  void edgeVouch.then((value) => (expectedVouch = value));
  const io = new Server<Record<string, never>, Record<string, never>, Record<string, never>, SocketData>(http, {
    serveClient: false,
    // A prompt's images come in one message: 20 MB of images is 26.7 MB of base64 (wire/session-controls).
    maxHttpBufferSize: Math.ceil((maxPromptImageTotalBytes * 4) / 3) + 4 * 1024 * 1024,
    allowRequest: (req, callback) => {
      const origin = req.headers.origin;
      if (origin === undefined) {
        const vouch = req.headers[EDGE_VOUCH_HEADER];
        edgeVouch.then(
          (expected) => {
            if (isEdgeVouch(typeof vouch === "string" ? vouch : undefined, expected)) return callback(null, true);
            deps.log.warn("socket refused: no Origin and not through the edge");
            callback(HandshakeError.forbiddenOrigin, false);
          },
          () => callback(HandshakeError.forbiddenOrigin, false),
        );
        return;
      }
      if (!allowed.has(origin)) {
        deps.log.warn({ origin }, "socket refused: origin not allowed");
        callback(HandshakeError.forbiddenOrigin, false);
        return;
      }
      callback(null, true);
    },
  });

  // After Socket.IO attached its listeners: the gate runs before them.
  gatePort(http, () => expectedVouch, deps.log);

  io.use((socket, next) => {
    authenticate(socket, deps).then(
      (found) => {
        if (!found) {
          next(new Error(HandshakeError.unauthorized));
          return;
        }
        socket.data.user = found.user;
        socket.data.sessionVersion = found.sessionVersion;
        next();
      },
      (err: unknown) => {
        deps.log.error({ err }, "socket authentication failed");
        next(new Error(HandshakeError.unauthorized));
      },
    );
  });

  io.on("connection", (socket) => {
    const user = socket.data.user;
    deps.log.debug({ userId: user.id, socketId: socket.id }, "socket connected");
    socket.on(
      ClientCommand.whoami,
      handleCommand(ZWhoamiPayload, async () => user, deps.log),
    );
  });

  return {
    io: io as unknown as Server,
    http,
    listen: async (port, host) => {
      // The vouch known before the first request: nothing is refused for want of it.
      await edgeVouch;
      return new Promise((resolve, reject) => {
        http.once("error", reject);
        http.listen(port, host, () => {
          const address = http.address();
          resolve(typeof address === "object" && address ? address.port : port);
        });
      });
    },
    close: async () => {
      // io.close() drops every transport without a DISCONNECT packet: browsers see "transport
      // close" and reconnect (to the restarted sidecar) by themselves. disconnectSockets() would
      // send one, and socket.io-client never retries after "io server disconnect".
      await new Promise<void>((resolve) => io.close(() => resolve()));
    },
  };
}

/**
 * The socket's user and session version, or undefined when no valid session comes with it: no
 * credential, a forged or expired one, a deleted or disabled account, or a version from before
 * the account's last sign-out, password change or disable.
 */
async function authenticate(
  socket: Socket,
  deps: SocketServerDeps,
): Promise<{ user: SocketUser; sessionVersion: number } | undefined> {
  const token = (socket.handshake.auth as { token?: unknown } | undefined)?.token;
  let claimed: { userId: string; sessionVersion: number } | undefined;
  if (typeof token === "string" && token.length > 0) {
    claimed = await verifySocketToken(deps.secret, token);
  } else {
    const cookie = readSessionCookie(socket.handshake.headers.cookie);
    if (cookie) {
      const claims = await decode({ token: cookie, secret: deps.secret }).catch(() => null);
      if (typeof claims?.uid === "string")
        claimed = { userId: claims.uid, sessionVersion: sessionVersionOf(claims as { sv?: unknown }) };
    }
  }
  if (!claimed) return undefined;
  const account = await deps.findUser(claimed.userId);
  if (!account || !isSessionCurrent(account, claimed.sessionVersion)) return undefined;
  return { user: { id: account.id, email: account.email, name: account.name }, sessionVersion: claimed.sessionVersion };
}
