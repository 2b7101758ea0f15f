/**
 * The session-controls half of the socket contract (`server/shared/wire/session-controls.ts`):
 * members read (models, context usage, file suggestions, slash commands), editors and owners
 * change (thinking budget, cancelling a queued prompt). Every message is authorized against
 * the member's current role; non-members get the same not_found as a missing session.
 */
import { authorizeSession } from "./session-access";
import type { Logger } from "pino";
import type { Server, Socket } from "socket.io";
import type { Db } from "@/server/db/client";
import { findWorkspaceAccess } from "@/server/db/sessions";
import { parseRole, type WorkspaceAction } from "@/server/domain/workspace/roles";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import type { SocketUser } from "@/server/shared/wire/events";
import {
  SessionControlCommand,
  ZCancelQueued,
  ZFileSuggestionsRead,
  ZModelCatalogRead,
  ZSessionRead,
  ZSetThinking,
} from "@/server/shared/wire/session-controls";
import type { Actor } from "@/server/sidecar/session/session-hub";
import { SessionControls, type SessionControlsDeps } from "@/server/sidecar/session/session-controls";
import { localSessionRouter, type SessionRouter } from "@/server/sidecar/cluster/command-forwarder";
import { handleCommand, limitCommandsInFlight } from "./handle-command";

const viewerRefused =
  "Viewers can read this session but not change its thinking budget or its queue. Ask a workspace owner for the editor role.";

/** Serves the session-control commands on every socket of `io`. Returns a function that detaches them. */
export function attachSessionControlSockets(
  io: Server,
  deps: SessionControlsDeps & { log: Logger; db: Db; /** Runs each control at the session's owner (cluster). */ router?: SessionRouter },
): () => void {
  const local = new SessionControls(deps);
  const controls = routedControls(local, deps.router ?? localSessionRouter);
  const onConnection = (socket: Socket) => {
    const user = (socket.data as { user?: SocketUser }).user;
    if (user) registerControlHandlers(socket, user, controls, deps.db, deps.log);
  };
  io.on("connection", onConnection);
  return () => {
    io.off("connection", onConnection);
    local.close();
  };
}

/** The controls that need the session's live CLI, each run where that CLI runs. */
function routedControls(controls: SessionControls, router: SessionRouter) {
  type S = { sessionId: string };
  const listModels = router.route("controls.listModels", (a: S) => controls.listModels(a.sessionId));
  const contextUsage = router.route("controls.contextUsage", (a: S) => controls.contextUsage(a.sessionId));
  const fileSuggestions = router.route("controls.fileSuggestions", (a: S & { query: string }) => controls.fileSuggestions(a.sessionId, a.query));
  const slashCommands = router.route("controls.slashCommands", (a: S) => controls.slashCommands(a.sessionId));
  const setThinking = router.route("controls.setThinking", (a: S & { actor: Actor; budget: number | null; commandId: string }) =>
    controls.setThinking(a.actor, a.sessionId, a.budget, a.commandId),
  );
  const cancelQueued = router.route("controls.cancelQueued", (a: S & { actor: Actor; promptSeq: number; commandId: string }) =>
    controls.cancelQueued(a.actor, a.sessionId, a.promptSeq, a.commandId),
  );
  return {
    modelCatalog: () => controls.modelCatalog(),
    listModels: (sessionId: string) => listModels(sessionId, { sessionId }),
    contextUsage: (sessionId: string) => contextUsage(sessionId, { sessionId }),
    fileSuggestions: (sessionId: string, query: string) => fileSuggestions(sessionId, { sessionId, query }),
    slashCommands: (sessionId: string) => slashCommands(sessionId, { sessionId }),
    setThinking: (actor: Actor, sessionId: string, budget: number | null, commandId: string) =>
      setThinking(sessionId, { actor, sessionId, budget, commandId }),
    cancelQueued: (actor: Actor, sessionId: string, promptSeq: number, commandId: string) =>
      cancelQueued(sessionId, { actor, sessionId, promptSeq, commandId }),
  };
}

function registerControlHandlers(socket: Socket, user: SocketUser, controls: ReturnType<typeof routedControls>, db: Db, log: Logger): void {
  limitCommandsInFlight(socket, log);
  const actor: Actor = { id: user.id, name: user.name };
  const authorize = async (sessionId: string, action: WorkspaceAction): Promise<void> => {
    await authorizeSession(db, user.id, sessionId, action, viewerRefused);
  };

  socket.on(
    SessionControlCommand.listModels,
    handleCommand(ZSessionRead, async (p) => (await authorize(p.sessionId, "read"), controls.listModels(p.sessionId)), log),
  );
  socket.on(
    SessionControlCommand.modelCatalog,
    handleCommand(
      ZModelCatalogRead,
      async (p) => {
        const access = await findWorkspaceAccess(db, user.id, p.workspace);
        if (!access || !parseRole(access.role)) {
          throw new AppError(ErrorCode.notFound, "No such workspace, or you are not a member of it.");
        }
        return controls.modelCatalog();
      },
      log,
    ),
  );
  socket.on(
    SessionControlCommand.contextUsage,
    handleCommand(ZSessionRead, async (p) => (await authorize(p.sessionId, "read"), controls.contextUsage(p.sessionId)), log),
  );
  socket.on(
    SessionControlCommand.fileSuggestions,
    handleCommand(
      ZFileSuggestionsRead,
      async (p) => (await authorize(p.sessionId, "read"), controls.fileSuggestions(p.sessionId, p.query)),
      log,
    ),
  );
  socket.on(
    SessionControlCommand.slashCommands,
    handleCommand(ZSessionRead, async (p) => (await authorize(p.sessionId, "read"), controls.slashCommands(p.sessionId)), log),
  );
  socket.on(
    SessionControlCommand.setThinking,
    handleCommand(
      ZSetThinking,
      async (p) => (
        await authorize(p.sessionId, "steer"), controls.setThinking(actor, p.sessionId, p.maxThinkingTokens, p.commandId)
      ),
      log,
    ),
  );
  socket.on(
    SessionControlCommand.cancelQueued,
    handleCommand(
      ZCancelQueued,
      async (p) => (await authorize(p.sessionId, "steer"), controls.cancelQueued(actor, p.sessionId, p.promptSeq, p.commandId)),
      log,
    ),
  );
}
