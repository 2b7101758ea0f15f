/**
 * The take-back half of the Changes contract (`server/shared/wire/changes.ts`): revert a file or
 * a hunk of a session's changes, rewind the workspace's files to before a prompt (a dry run
 * without `confirm`). Owners and editors only (`steer`), checked on every message; non-members
 * get the same not_found as a missing session. Each confirmed take-back is one command of the
 * session (retried ids have no second effect), logged in the conversation and audited.
 */
import type { Logger } from "pino";
import type { Server, Socket } from "socket.io";
import type { Db } from "@/server/db/client";
import type { WorkspaceAction } from "@/server/domain/workspace/roles";
import { ChangesCommand, ZRevertFile, ZRevertHunk, ZRewind } from "@/server/shared/wire/changes";
import type { SocketUser } from "@/server/shared/wire/events";
import type { Actor, SessionHub } from "@/server/sidecar/session/session-hub";
import type { TurnSnapshots } from "@/server/sidecar/session/turn-snapshots";
import { changeRootOf } from "@/server/workspace-agent";
import { localSessionRouter, type SessionRouter } from "@/server/sidecar/cluster/command-forwarder";
import type { z } from "zod";
import { handleCommand } from "./handle-command";
import { authorizeSession } from "./session-access";

export interface ChangesSocketDeps {
  hub: SessionHub;
  snapshots: TurnSnapshots;
  db: Db;
  log: Logger;
  /** Runs each take-back at the session's owner (cluster): it must not race the turn it checks for. */
  router?: SessionRouter;
}

const viewerRefused = "Viewers can read a session's changes but not take them back. Ask a workspace owner for the editor role.";

/** Serves the take-back commands on every socket of `io`. Returns a function that detaches it. */
export function attachChangesSockets(io: Server, deps: ChangesSocketDeps): () => void {
  const takeBacks = routedTakeBacks(deps, deps.router ?? localSessionRouter);
  const onConnection = (socket: Socket) => {
    const user = (socket.data as { user?: SocketUser }).user;
    if (user) registerChangesHandlers(socket, user, deps, takeBacks);
  };
  io.on("connection", onConnection);
  return () => {
    io.off("connection", onConnection);
  };
}

/** The confirmed take-backs, each run where the session's CLI runs (with its command memo). */
function routedTakeBacks({ hub, snapshots }: ChangesSocketDeps, router: SessionRouter) {
  return {
    revertFile: router.route("changes.revertFile", ({ actor, p }: { actor: Actor; p: z.infer<typeof ZRevertFile> }) =>
      hub.takeBack(actor, p.sessionId, p.commandId, "revert", (session, status) =>
        snapshots.revertFile(session, status, { scope: p.scope, path: p.path }, actor.id),
      ),
    ),
    revertHunk: router.route("changes.revertHunk", ({ actor, p }: { actor: Actor; p: z.infer<typeof ZRevertHunk> }) =>
      hub.takeBack(actor, p.sessionId, p.commandId, "revert", (session, status) =>
        snapshots.revertHunk(session, status, { scope: p.scope, path: p.path, hunk: p.hunk }, actor.id),
      ),
    ),
    rewind: router.route("changes.rewind", ({ actor, p }: { actor: Actor; p: z.infer<typeof ZRewind> }) =>
      hub.takeBack(actor, p.sessionId, p.commandId, "rewind", (session, status) =>
        snapshots.rewind(session, status, { promptSeq: p.promptSeq, includeConflicts: p.includeConflicts }, actor.id),
      ),
    ),
  };
}

function registerChangesHandlers(
  socket: Socket,
  user: SocketUser,
  deps: ChangesSocketDeps,
  takeBacks: ReturnType<typeof routedTakeBacks>,
): void {
  const { snapshots, db, log } = deps;
  const actor: Actor = { id: user.id, name: user.name };
  const authorize = (sessionId: string, action: WorkspaceAction) => authorizeSession(db, user.id, sessionId, action, viewerRefused);

  socket.on(
    ChangesCommand.revertFile,
    handleCommand(
      ZRevertFile,
      async (p) => {
        await authorize(p.sessionId, "steer");
        return takeBacks.revertFile(p.sessionId, { actor, p });
      },
      log,
    ),
  );
  socket.on(
    ChangesCommand.revertHunk,
    handleCommand(
      ZRevertHunk,
      async (p) => {
        await authorize(p.sessionId, "steer");
        return takeBacks.revertHunk(p.sessionId, { actor, p });
      },
      log,
    ),
  );
  socket.on(
    ChangesCommand.rewind,
    handleCommand(
      ZRewind,
      async (p) => {
        const access = await authorize(p.sessionId, "steer");
        if (!p.confirm) {
          const { repoKey, root } = changeRootOf({
            sessionId: p.sessionId,
            workspaceId: access.workspace.id,
            rootPath: access.workspace.rootPath,
            worktreePath: access.session.worktreePath,
          });
          return snapshots.previewRewind(
            { sessionId: p.sessionId, workspaceId: access.workspace.id, workspaceRoot: access.workspace.rootPath, rootPath: root, repoKey },
            p.promptSeq,
          );
        }
        return takeBacks.rewind(p.sessionId, { actor, p });
      },
      log,
    ),
  );
}
