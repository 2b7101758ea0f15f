/**
 * The session-management commands (`server/shared/wire/session-manage.ts`) on every socket:
 * validated, authorized per message against the member's role (rename, archive and task stops
 * for editors and owners, delete for owners only; non-members get not_found), then handed to
 * {@link SessionManagement}. A rename reaches open pages through the hub's status fact; an
 * archive or delete is announced to the workspace's and the session's rooms.
 */
import type { Logger } from "pino";
import type { Server, Socket } from "socket.io";
import type { Db } from "@/server/db/client";
import type { SessionAccess } from "@/server/db/sessions";
import type { WorkspaceAction } from "@/server/domain/workspace/roles";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import type { SocketUser } from "@/server/shared/wire/events";
import {
  SessionManageCommand,
  SessionManageFact,
  ZArchiveSession,
  ZDeleteSession,
  ZRenameSession,
  ZStopTask,
  type SessionRemoved,
} from "@/server/shared/wire/session-manage";
import type { Actor } from "@/server/sidecar/session/session-hub";
import type { SessionManagement } from "@/server/sidecar/session/session-management";
import { localSessionRouter, type SessionRouter } from "@/server/sidecar/cluster/command-forwarder";
import { handleCommand } from "./handle-command";
import { authorizeSession } from "./session-access";
import { sessionRoom, workspaceRoom } from "./session-socket";

export interface SessionManageSocketDeps {
  management: SessionManagement;
  db: Db;
  log: Logger;
  /** Runs each command at the session's owner (cluster). */
  router?: SessionRouter;
}


export function attachSessionManageSockets(io: Server, deps: SessionManageSocketDeps): () => void {
  const management = routedManagement(deps.management, deps.router ?? localSessionRouter);
  const onConnection = (socket: Socket) => {
    const user = (socket.data as { user?: SocketUser }).user;
    if (user) register(io, socket, user, { ...deps, management });
  };
  io.on("connection", onConnection);
  return () => io.off("connection", onConnection);
}

/** Session management run where the session's CLI runs (its entry and child live there). */
function routedManagement(management: SessionManagement, router: SessionRouter) {
  type A = { actor: Actor; sessionId: string };
  const rename = router.route("manage.rename", (a: A & { title: string }) => management.rename(a.actor, a.sessionId, a.title));
  const stopTask = router.route("manage.stopTask", (a: A & { taskId: string }) => management.stopTask(a.actor, a.sessionId, a.taskId));
  const archive = router.route("manage.archive", (a: A & { archived: boolean }) => management.archive(a.actor, a.sessionId, a.archived));
  const remove = router.route("manage.remove", (a: A & { confirm: string }) => management.remove(a.actor, a.sessionId, a.confirm));
  const plain = (actor: Actor): Actor => ({ id: actor.id, name: actor.name });
  return {
    rename: (actor: Actor, sessionId: string, title: string) => rename(sessionId, { actor: plain(actor), sessionId, title }),
    stopTask: (actor: Actor, sessionId: string, taskId: string) => stopTask(sessionId, { actor: plain(actor), sessionId, taskId }),
    archive: (actor: Actor, sessionId: string, archived: boolean) => archive(sessionId, { actor: plain(actor), sessionId, archived }),
    remove: (actor: Actor, sessionId: string, confirm: string) => remove(sessionId, { actor: plain(actor), sessionId, confirm }),
  };
}

function register(
  io: Server,
  socket: Socket,
  user: SocketUser,
  deps: Omit<SessionManageSocketDeps, "management"> & { management: ReturnType<typeof routedManagement> },
): void {
  const { management, db, log } = deps;
  const actor: Actor = { id: user.id, name: user.name };

  const authorize = async (
    sessionId: string,
    need: WorkspaceAction | "owner",
    what: string,
  ): Promise<SessionAccess> => {
    const viewerRefused = `Viewers cannot ${what}. Ask a workspace owner for the editor role.`;
    const access = await authorizeSession(db, user.id, sessionId, need === "owner" ? "read" : need, viewerRefused);
    if (need === "owner" && access.role !== "owner") throw new AppError(ErrorCode.forbidden, `Only the workspace's owners can ${what}.`);
    return access;
  };

  const announce = (removed: SessionRemoved & { archived?: boolean }) =>
    io
      .to([workspaceRoom(removed.workspaceId), sessionRoom(removed.sessionId)])
      .emit(SessionManageFact.removed, removed);

  socket.on(
    SessionManageCommand.rename,
    handleCommand(
      ZRenameSession,
      async (p) => {
        await authorize(p.sessionId, "steer", "rename sessions");
        return management.rename(actor, p.sessionId, p.title);
      },
      log,
    ),
  );
  socket.on(
    SessionManageCommand.stopTask,
    handleCommand(
      ZStopTask,
      async (p) => {
        await authorize(p.sessionId, "steer", "stop a session's tasks");
        return management.stopTask(actor, p.sessionId, p.taskId);
      },
      log,
    ),
  );
  socket.on(
    SessionManageCommand.archive,
    handleCommand(
      ZArchiveSession,
      async (p) => {
        const access = await authorize(p.sessionId, "steer", "archive sessions");
        const result = await management.archive(actor, p.sessionId, p.archived);
        announce({ sessionId: p.sessionId, workspaceId: access.workspace.id, archived: result.archived });
        return result;
      },
      log,
    ),
  );
  socket.on(
    SessionManageCommand.remove,
    handleCommand(
      ZDeleteSession,
      async (p) => {
        await authorize(p.sessionId, "owner", "delete sessions");
        const removed = await management.remove(actor, p.sessionId, p.confirm);
        announce(removed);
        return removed;
      },
      log,
    ),
  );
}
