/**
 * The session half of the socket contract (`server/shared/wire/session.ts`): each command is
 * validated by the funnel, authorized against the member's role on the session's workspace
 * (every message, not only the connection), and handed to the hub. The hub's facts go to
 * rooms: `session:<id>` for a session's viewers, `workspace:<id>` for its workspace's lists.
 */
import { authorizeSession } from "./session-access";
import type { Logger } from "pino";
import type { Server, Socket } from "socket.io";
import type { Db } from "@/server/db/client";
import { findWorkspaceAccess, type SessionAccess, type WorkspaceAccess } from "@/server/db/sessions";
import { canPerform, parseRole, type WorkspaceAction } from "@/server/domain/workspace/roles";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import type { SocketUser } from "@/server/shared/wire/events";
import {
  SessionCommand,
  SessionFact,
  ZCreateSession,
  ZFetchEvent,
  ZPrompt,
  ZSessionCommand,
  ZSetMode,
  ZSetModel,
  ZSubscribe,
  ZUnsubscribe,
  ZWatchWorkspace,
  type PresenceChanged,
  type SubscribeResult,
  type WatchWorkspaceResult,
} from "@/server/shared/wire/session";
import type { SessionCommands, SessionFeed } from "@/server/sidecar/session/session-commands";
import type { Actor, SubscribeSnapshot } from "@/server/sidecar/session/session-hub-types";
import { handleCommand, handleCommandWithReply, limitCommandsInFlight } from "./handle-command";
import { roomViewers } from "./room-viewers";
import { EventOutbox } from "./event-outbox";
import { SessionPresence, type PresenceUpdate } from "./session-presence";

export interface SessionSocketDeps {
  /** The sessions' commands and facts (the local SessionHub; a forwarding implementation later). */
  hub: SessionCommands & SessionFeed;
  db: Db;
  log: Logger;
  /** The catch-up of a session another sidecar runs (server/sidecar/cluster/remote-subscribe.ts); false: run here. */
  /** Several sidecars: announce viewers from every node's sockets (room-viewers.ts), on every join and leave. */
  clusterPresence?: boolean;
  remoteSubscribe?: (sessionId: string, afterSeq: number, join: () => Promise<void> | void, deliver: (snapshot: SubscribeSnapshot) => void) => Promise<boolean>;
}

/** The room of a session's viewers. */
export function sessionRoom(sessionId: string): string {
  return `session:${sessionId}`;
}

/** The room of the people watching a workspace's session list. */
export function workspaceRoom(workspaceId: string): string {
  return `workspace:${workspaceId}`;
}

const workspaceNotFound = "No such workspace, or you are not a member of it.";
const viewerRefused =
  "Viewers can read this session but not prompt, interrupt, stop, or change its mode or model. Ask a workspace owner for the editor role.";

/**
 * Serves the session commands on every socket of `io` and relays the hub's facts to rooms.
 * Returns a function that detaches both.
 */
export function attachSessionSockets(io: Server, deps: SessionSocketDeps): () => void {
  const presence = new SessionPresence();
  const outbox = new EventOutbox(
    (sessionId, events) => {
      const room = io.to(sessionRoom(sessionId));
      if (events.length === 1) room.emit(SessionFact.event, events[0]!);
      else room.emit(SessionFact.events, events);
    },
    (err, sessionId) => deps.log.error({ err, sessionId }, "sending live events to a session's room failed"),
  );
  const offEvent = deps.hub.onDidEmitEvent((event) => outbox.push(event));
  const offStatus = deps.hub.onDidChangeStatus((view) => {
    // a status follows the events that led to it
    outbox.flush(view.id);
    io.to([sessionRoom(view.id), workspaceRoom(view.workspaceId)]).emit(SessionFact.status, view);
  });
  const onConnection = (socket: Socket) => {
    const user = (socket.data as { user?: SocketUser }).user;
    if (user) registerSessionHandlers(io, socket, user, deps, presence, outbox);
  };
  io.on("connection", onConnection);
  return () => {
    outbox.flushAll();
    offEvent();
    offStatus();
    io.off("connection", onConnection);
    presence.clear();
  };
}

function registerSessionHandlers(
  io: Server,
  socket: Socket,
  user: SocketUser,
  deps: SessionSocketDeps,
  presence: SessionPresence,
  outbox: EventOutbox,
): void {
  const { hub, db, log } = deps;
  // Covers every command on this socket (the approval commands too), registered here or elsewhere.
  limitCommandsInFlight(socket, log);
  const actor: Actor = { id: user.id, name: user.name };
  const announce = (update: PresenceUpdate) => {
    if (deps.clusterPresence) {
      const room = sessionRoom(update.sessionId);
      void roomViewers(io, room).then(
        (viewers) => io.to(room).emit(SessionFact.presence, { sessionId: update.sessionId, viewers } satisfies PresenceChanged),
        (err: unknown) => log.warn({ err, sessionId: update.sessionId }, "listing a session's viewers across sidecars failed"),
      );
      return;
    }
    if (!update.changed) return;
    const payload: PresenceChanged = { sessionId: update.sessionId, viewers: update.viewers };
    io.to(sessionRoom(update.sessionId)).emit(SessionFact.presence, payload);
  };

  /** The session if the user may do `action` in it; non-members learn nothing (the same not_found as a missing session). */
  const authorize = (sessionId: string, action: WorkspaceAction): Promise<SessionAccess> =>
    authorizeSession(db, user.id, sessionId, action, viewerRefused);
  const authorizeWorkspace = async (slug: string, action: WorkspaceAction): Promise<WorkspaceAccess> => {
    const access = await findWorkspaceAccess(db, user.id, slug);
    const role = access === undefined ? undefined : parseRole(access.role);
    if (!access || !role) throw new AppError(ErrorCode.notFound, workspaceNotFound);
    if (!canPerform(role, action)) {
      throw new AppError(
        ErrorCode.forbidden,
        "Viewers cannot start sessions. Ask a workspace owner for the editor role.",
      );
    }
    return access;
  };

  socket.on(
    SessionCommand.create,
    handleCommand(
      ZCreateSession,
      async (p) =>
        hub.createSession(actor, await authorizeWorkspace(p.workspace, "steer"), {
          mode: p.mode,
          model: p.model,
          maxBudgetUsd: p.maxBudgetUsd,
          worktree: p.worktree,
          commandId: p.commandId,
        }),
      log,
    ),
  );

  socket.on(
    SessionCommand.subscribe,
    handleCommandWithReply<typeof ZSubscribe, SubscribeResult>(
      ZSubscribe,
      async ({ sessionId, afterSeq }, reply) => {
        await authorize(sessionId, "read");
        const room = sessionRoom(sessionId);
        const joinRemote = () => socket.join(room);
        const deliverRemote = (snapshot: SubscribeSnapshot) => {
          const update = presence.join(sessionId, socket.id, { userId: user.id, name: user.name });
          reply({ ...snapshot, viewers: update.viewers });
          announce(update);
        };
        if (await deps.remoteSubscribe?.(sessionId, afterSeq, joinRemote, deliverRemote)) return;
        // Out of the room while the backlog is read: what arrives meanwhile comes in the snapshot.
        await socket.leave(room);
        await hub.subscribe(sessionId, afterSeq, (snapshot) => {
          // A page of a longer backlog: the client asks for the next one before it joins.
          if (!socket.connected || snapshot.hasMore)
            return reply({ ...snapshot, viewers: presence.viewers(sessionId) });
          // Join and ack in one tick: live events emitted after this line follow the ack on the wire.
          // The snapshot holds every event committed so far; those still in the outbox go to the
          // room now, before this socket is in it (else it would get them twice).
          outbox.flush(sessionId);
          void socket.join(room);
          const update = presence.join(sessionId, socket.id, { userId: user.id, name: user.name });
          reply({ ...snapshot, viewers: update.viewers });
          announce(update);
        });
      },
      log,
    ),
  );

  socket.on(
    SessionCommand.unsubscribe,
    handleCommand(
      ZUnsubscribe,
      async ({ sessionId }) => {
        await socket.leave(sessionRoom(sessionId));
        announce(presence.leave(sessionId, socket.id));
        return {};
      },
      log,
    ),
  );

  /** Wraps a command that steers a session: editors and owners only. */
  const steering =
    <P extends { sessionId: string }, R>(run: (p: P, access: SessionAccess) => Promise<R>) =>
    async (p: P): Promise<R> =>
      run(p, await authorize(p.sessionId, "steer"));

  socket.on(
    SessionCommand.prompt,
    handleCommand(
      ZPrompt,
      steering((p) => hub.prompt(actor, p.sessionId, p.text, p.commandId, p.images)),
      log,
    ),
  );
  socket.on(
    SessionCommand.interrupt,
    handleCommand(
      ZSessionCommand,
      steering((p) => hub.interrupt(actor, p.sessionId, p.commandId)),
      log,
    ),
  );
  socket.on(
    SessionCommand.stop,
    handleCommand(
      ZSessionCommand,
      steering(async (p, access) => {
        const accepted = await hub.stop(actor, p.sessionId, p.commandId);
        await auditStopOnce(db, actor, access, p.commandId, accepted.seq);
        return accepted;
      }),
      log,
    ),
  );
  socket.on(
    SessionCommand.setMode,
    handleCommand(
      ZSetMode,
      steering((p, access) => hub.setMode(actor, p.sessionId, p.mode, p.commandId, access.workspace.allowBypass)),
      log,
    ),
  );
  socket.on(
    SessionCommand.setModel,
    handleCommand(
      ZSetModel,
      steering((p) => hub.setModel(actor, p.sessionId, p.model, p.commandId)),
      log,
    ),
  );
  socket.on(
    SessionCommand.fetchEvent,
    handleCommand(
      ZFetchEvent,
      async (p) => {
        await authorize(p.sessionId, "read");
        return hub.fetchEvent(p.sessionId, p.seq);
      },
      log,
    ),
  );
  socket.on(
    SessionCommand.watchWorkspace,
    handleCommand(
      ZWatchWorkspace,
      async (p): Promise<WatchWorkspaceResult> => {
        const access = await authorizeWorkspace(p.workspace, "read");
        await socket.join(workspaceRoom(access.workspace.id));
        return { workspaceId: access.workspace.id, sessions: await hub.liveViews(access.workspace.id) };
      },
      log,
    ),
  );

  socket.on("disconnect", () => {
    for (const update of presence.leaveAll(socket.id)) announce(update);
  });
}

/**
 * Stopping a session's process is a person's change: audited `session.stop`, once per command
 * (a retried `commandId` is answered from the hub's memo and finds its audit row already there).
 */
async function auditStopOnce(db: Db, actor: Actor, access: SessionAccess, commandId: string, seq: number): Promise<void> {
  const details = JSON.stringify({ commandId, seq });
  const where = { action: "session.stop", objectType: "session", objectId: access.session.id, details };
  if ((await db.auditLog.count({ where })) > 0) return;
  await db.auditLog.create({ data: { ...where, actorId: actor.id, workspaceId: access.session.workspaceId } });
}
