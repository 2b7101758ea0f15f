/**
 * The paged read of a session's log (`server/shared/wire/session-pages.ts`): any member of the
 * session's workspace reads earlier pages; non-members get the same not_found as a missing
 * session. Authorized on every message, like every session command.
 */
import type { Logger } from "pino";
import type { Server, Socket } from "socket.io";
import type { Db } from "@/server/db/client";
import type { SocketUser } from "@/server/shared/wire/events";
import { SessionPageCommand, ZEventsBefore } from "@/server/shared/wire/session-pages";
import { readEventsBefore } from "@/server/sidecar/session/session-pages";
import { handleCommand, limitCommandsInFlight } from "./handle-command";
import { authorizeSession } from "./session-access";

/** Serves `session:events-before` on every socket of `io`. Returns a function that detaches it. */
export function attachSessionPageSockets(io: Server, deps: { db: Db; log: Logger }): () => void {
  const onConnection = (socket: Socket) => {
    const user = (socket.data as { user?: SocketUser }).user;
    if (!user) return;
    limitCommandsInFlight(socket, deps.log);
    socket.on(
      SessionPageCommand.eventsBefore,
      handleCommand(
        ZEventsBefore,
        async (p) => {
          // every member may read; "read" is the lowest action, so `refused` is never shown
          await authorizeSession(deps.db, user.id, p.sessionId, "read", "You cannot read this session.");
          return readEventsBefore(deps.db, p.sessionId, p.beforeSeq);
        },
        deps.log,
      ),
    );
  };
  io.on("connection", onConnection);
  return () => io.off("connection", onConnection);
}
