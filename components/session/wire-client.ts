/**
 * The browser's end of the session socket. components/ may import only types from
 * server/shared/wire, so the event names are re-declared here and checked against the
 * contract's constants with `satisfies`: a renamed event fails the type check, not a user.
 */
import { io, type Socket } from "socket.io-client";
import type { Ack } from "@/server/shared/wire/ack";
import type { SessionCommand, SessionFact } from "@/server/shared/wire/session";
import type { SessionManageCommand } from "@/server/shared/wire/session-manage";

export const command = {
  create: "session:create",
  subscribe: "session:subscribe",
  unsubscribe: "session:unsubscribe",
  prompt: "session:prompt",
  interrupt: "session:interrupt",
  setMode: "session:set-mode",
  setModel: "session:set-model",
  stop: "session:stop",
  fetchEvent: "session:fetch-event",
  watchWorkspace: "workspace:watch",
} as const satisfies typeof SessionCommand;

/** Session management (rename, background tasks, archive, delete): `server/shared/wire/session-manage.ts`. */
export const manageCommand = {
  rename: "session:rename",
  stopTask: "session:stop-task",
  archive: "session:archive",
  remove: "session:delete",
} as const satisfies typeof SessionManageCommand;

export const fact = {
  event: "session:event",
  events: "session:events",
  status: "session:status",
  presence: "presence:changed",
} as const satisfies typeof SessionFact;

export type CommandName = (typeof command)[keyof typeof command] | (typeof manageCommand)[keyof typeof manageCommand];

let shared: Socket | undefined;

/**
 * The tab's one socket to the sidecar, opened on first use. The edge proxy forwards
 * `/socket.io/*` and the next-auth cookie authenticates the handshake.
 */
export function getSocket(): Socket {
  if (shared) return shared;
  shared = io({ path: "/socket.io", withCredentials: true, transports: ["websocket", "polling"] });
  shared.on("disconnect", (reason) => {
    // (closed while this page renews its own sign-in: it connects again when that is done)
    if (reason === closedByServer && renewals === 0) askTheWebApp();
  });
  return shared;
}

let renewals = 0;

/**
 * Runs `work`, which voids this page's own cookie and signs it in again (a password change),
 * without the page loading itself when the sweep closes its socket meanwhile (it would land on
 * sign-in before the new cookie is there). Afterwards the socket connects again, with the new
 * cookie, so that the sweep has no old socket left to close.
 */
export async function renewingOwnSignIn<T>(work: () => Promise<T>): Promise<T> {
  renewals += 1;
  try {
    return await work();
  } finally {
    renewals -= 1;
    if (renewals === 0) shared?.disconnect().connect();
  }
}

/** socket.io-client's reason when the sidecar closed the socket itself; it does not reconnect then. */
export const closedByServer = "io server disconnect";

/** When the page last loaded itself again for a closed socket (sessionStorage; epoch ms). */
const reloadedKey = "conduit:socket-closed-reload";
const reloadEveryMs = 60_000;

/**
 * The sidecar closes a socket itself only when its access was revoked (the revocation sweep:
 * signed out elsewhere, account disabled, no longer a member of a workspace it listens to). The
 * page then asks the web app again by loading itself: a signed-out reader lands on sign-in, one
 * no longer a member gets the not-found page, and one still allowed (a session that went away)
 * gets the page back with a new socket. The draft is kept (draft-store.ts). At most once a minute: a
 * page closed again that soon stays and says so (`ConnectionNotice`).
 */
function askTheWebApp(): void {
  try {
    const last = Number(window.sessionStorage.getItem(reloadedKey) ?? 0);
    if (Date.now() - last < reloadEveryMs) return;
    window.sessionStorage.setItem(reloadedKey, String(Date.now()));
  } catch {
    return; // no storage: no guard against a loop, so no reload either
  }
  window.location.reload();
}

/** A fresh idempotency key for one command (kept across its retries). */
export function newCommandId(): string {
  // randomUUID exists only in secure contexts; a plain-http LAN address is not one.
  if (typeof crypto.randomUUID === "function") return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const hex = [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const timeoutCode = "unavailable";

/**
 * Emits a command and waits for its ack. On a timeout it retries with the same payload, so the
 * same `commandId`: the sidecar answers a repeated id with the first outcome and never acts twice.
 */
export async function emitCommand<T>(
  socket: Socket,
  name: CommandName,
  payload: unknown,
  options: { timeoutMs?: number; attempts?: number } = {},
): Promise<Ack<T>> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const attempts = options.attempts ?? 3;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    try {
      const ack = (await socket.timeout(timeoutMs).emitWithAck(name, payload)) as Ack<T>;
      if (ack && typeof ack === "object" && "ok" in ack) return ack;
      return {
        ok: false,
        error: { code: "internal", message: "The server sent an answer this page does not understand." },
      };
    } catch {
      // timed out (or the socket dropped): try again with the same payload
    }
  }
  return {
    ok: false,
    error: {
      code: timeoutCode,
      message: socket.connected
        ? "The server did not answer in time. Try again."
        : "Not connected to the server. Check your connection and try again.",
    },
  };
}

/** The message of a failed ack, ready to show. */
export function ackMessage(ack: Ack<unknown>): string | undefined {
  return ack.ok ? undefined : ack.error.message || ack.error.code;
}
