/**
 * The approval half of the socket contract (`server/shared/wire/approval.ts`). Every socket
 * joins its user's room, so all tabs and devices of a person see one inbox; each decision is
 * authorized by the service against the decider's role at that moment, and the pending part of
 * a listed inbox is filtered by the caller's roles at that moment too (someone lowered to viewer
 * after a request was routed to them no longer sees it as theirs to answer).
 */
import type { Logger } from "pino";
import type { Server, Socket } from "socket.io";
import type { Db } from "@/server/db/client";
import { mayDecide } from "@/server/domain/approval/approval-state";
import { parseRole } from "@/server/domain/workspace/roles";
import { ApprovalCommand, ApprovalFact, ZDecide, ZListApprovals } from "@/server/shared/wire/approval";
import type { SocketUser } from "@/server/shared/wire/events";
import type { ApprovalList } from "@/server/shared/wire/approval";
import type { ApprovalService, NotifyUsers } from "@/server/sidecar/approval/approval-service";
import { handleCommand } from "./handle-command";

/** The room of every socket of one user. */
export function userRoom(userId: string): string {
  return `user:${userId}`;
}

/** The service's notifier for `io`: a fact goes to each user's room. */
export function notifyUsersOf(io: Server): NotifyUsers {
  return (userIds, event, payload) => {
    if (userIds.length === 0) return;
    io.to(userIds.map(userRoom)).emit(event, payload);
  };
}

/** Serves the approval commands on every socket of `io`. Returns a function that detaches it. */
export function attachApprovalSockets(
  io: Server,
  deps: { service: ApprovalService; db: Db; log: Logger; decide?: ApprovalService["decide"] },
): () => void {
  const onConnection = (socket: Socket) => {
    const user = (socket.data as { user?: SocketUser }).user;
    if (!user) return;
    void socket.join(userRoom(user.id));
    const { service, log } = deps;
    socket.on(
      ApprovalCommand.list,
      handleCommand(
        ZListApprovals,
        async (): Promise<ApprovalList> => {
          const [list, deciding] = await Promise.all([
            service.list({ id: user.id, name: user.name }),
            workspacesDecidedBy(deps.db, user.id),
          ]);
          const approvals = list.approvals.filter((a) => a.status !== "pending" || deciding.has(a.workspace.id));
          return { ...list, approvals };
        },
        log,
      ),
    );
    socket.on(
      ApprovalCommand.decide,
      handleCommand(
        ZDecide,
        // In a cluster, `decide` sends a decision to the sidecar whose CLI asked (approval-forwarder.ts).
        async (p) => (deps.decide ?? service.decide.bind(service))({ id: user.id, name: user.name }, p.approvalId, p.decision, p.commandId),
        log,
      ),
    );
    if (deps.decide === undefined) socket.emit(ApprovalFact.count, service.count(user.id));
    // In a cluster: every sidecar's pending questions, from the database.
    else
      void service.countFor(user.id).then(
        (count) => socket.emit(ApprovalFact.count, count),
        (err: unknown) => log.warn({ err }, "counting pending approvals failed"),
      );
  };
  io.on("connection", onConnection);
  return () => {
    io.off("connection", onConnection);
  };
}

/** The workspaces where the user may answer tool requests now (owner or editor). */
async function workspacesDecidedBy(db: Db, userId: string): Promise<Set<string>> {
  const rows = await db.membership.findMany({ where: { userId }, select: { workspaceId: true, role: true } });
  return new Set(rows.filter((r) => mayDecide(parseRole(r.role) ?? null)).map((r) => r.workspaceId));
}
