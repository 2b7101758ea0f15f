/**
 * `workspace:watch-role` (server/shared/wire/role-watch.ts): a page says which role it shows for a
 * workspace; the answer is the role now (read at once, so a change between the page's render and
 * its socket is not missed), and the socket remembers it for the revocation sweep, which sends
 * `workspace:role` when the membership says otherwise. Only the caller's own membership is read.
 */
import type { Logger } from "pino";
import type { Server, Socket } from "socket.io";
import type { Db } from "@/server/db/client";
import { parseRole, type Role } from "@/server/domain/workspace/roles";
import type { SocketUser } from "@/server/shared/wire/events";
import { RoleWatchCommand, RoleWatchFact, ZWatchRole, type RoleChanged, type WatchRoleResult } from "@/server/shared/wire/role-watch";
import { handleCommand, limitCommandsInFlight } from "./handle-command";

/** Most workspaces one socket watches (a tab opens a handful; older ones are forgotten first). */
const maxWatched = 32;

interface Watched {
  role: Role;
  /** When it was set (ms): a sweep pass that read the memberships before this does not judge it. */
  at: number;
}

const watchedBySocket = new WeakMap<Socket, Map<string, Watched>>();

/** Serves `workspace:watch-role` on every socket of `io`. Returns a function that detaches it. */
export function attachRoleWatch(io: Server, deps: { db: Db; log: Logger; now?: () => number }): () => void {
  const now = deps.now ?? Date.now;
  const onConnection = (socket: Socket) => {
    const user = (socket.data as { user?: SocketUser }).user;
    if (!user) return;
    limitCommandsInFlight(socket, deps.log);
    socket.on(
      RoleWatchCommand.watch,
      handleCommand(
        ZWatchRole,
        async ({ workspaceId, role: shown }): Promise<WatchRoleResult> => {
          const membership = await deps.db.membership.findUnique({
            where: { workspaceId_userId: { workspaceId, userId: user.id } },
            select: { role: true },
          });
          const role = membership ? (parseRole(membership.role) ?? null) : null;
          let watched = watchedBySocket.get(socket);
          if (!watched) watchedBySocket.set(socket, (watched = new Map()));
          watched.delete(workspaceId);
          if (watched.size >= maxWatched) watched.delete(watched.keys().next().value!);
          watched.set(workspaceId, { role: role ?? shown, at: now() });
          return { role };
        },
        deps.log,
      ),
    );
  };
  io.on("connection", onConnection);
  return () => io.off("connection", onConnection);
}

/**
 * For the sweep: tells `socket` of every watched workspace whose role in `roles` (the user's
 * memberships as read by a pass that began at `readAt`) differs from the one it shows. A
 * workspace the user left is left to the sweep's closing. Returns how many facts were sent.
 */
export function tellRoleChanges(socket: Socket, roles: ReadonlyMap<string, Role> | undefined, readAt: number): number {
  const watched = watchedBySocket.get(socket);
  if (!watched || !roles) return 0;
  let told = 0;
  for (const [workspaceId, entry] of watched) {
    const role = roles.get(workspaceId);
    if (role === undefined || role === entry.role || entry.at >= readAt) continue;
    const fact: RoleChanged = { workspaceId, role, previous: entry.role };
    watched.set(workspaceId, { role, at: entry.at });
    socket.emit(RoleWatchFact.changed, fact);
    told++;
  }
  return told;
}
