/**
 * When the sidecar pushes to phones: an approval routed to a user (the same recipients as the
 * `approval:requested` fact), and a finished turn to the person whose prompt started it when
 * they have no open socket on that session. Wiring only; payloads are `server/domain/push`,
 * sending is `server/push/push-sender`.
 */
import type { Server } from "socket.io";
import type { Db } from "@/server/db/client";
import { approvalPushPayload, shouldPushFinishedTurn, turnFinishedPushPayload } from "@/server/domain/push/push-payload";
import type { PushSender } from "@/server/push/push-sender";
import { ApprovalFact, type ApprovalView } from "@/server/shared/wire/approval";
import type { SocketData } from "@/server/sidecar/socket/create-socket-server";
import type { NotifyUsers } from "@/server/sidecar/approval/approval-service";
import type { SessionHub } from "@/server/sidecar/session/session-hub";
import { sessionRoom } from "@/server/sidecar/socket/session-socket";

/** Wraps the approval service's notifier: a new approval also goes to its recipients' phones. */
export function notifyWithPush(notify: NotifyUsers, sender: Pick<PushSender, "sendToUsers">): NotifyUsers {
  return (userIds, event, payload) => {
    notify(userIds, event, payload);
    if (event !== ApprovalFact.requested) return;
    void sender.sendToUsers(userIds, approvalPushPayload(payload as ApprovalView), (s) => s.approvals);
  };
}

/** Pushes finished turns to their absent prompters. Returns a function that detaches it. */
export function attachTurnPushes(deps: {
  io: Pick<Server, "in">;
  hub: Pick<SessionHub, "onDidEmitEvent">;
  db: Pick<Db, "session">;
  sender: Pick<PushSender, "sendToUsers">;
}): () => void {
  // who sent the prompt the running turn answers, per session (the latest prompt wins: queued
  // prompts are answered in order, and the last sender is the one waiting)
  const prompters = new Map<string, string>();
  return deps.hub.onDidEmitEvent((event) => {
    if (event.kind === "prompt" && event.user) {
      prompters.set(event.sessionId, event.user.id);
      return;
    }
    if (event.kind !== "cli" || !isResult(event.payload)) return;
    const userId = prompters.get(event.sessionId);
    if (userId === undefined) return;
    prompters.delete(event.sessionId);
    const result = event.payload;
    void (async () => {
      const sockets = await deps.io.in(sessionRoom(event.sessionId)).fetchSockets();
      const watching = sockets.some((s) => (s.data as Partial<SocketData>).user?.id === userId);
      // someone watching the page sees the turn end there: skip the settings and session reads
      if (watching) return;
      const session = await deps.db.session.findUnique({
        where: { id: event.sessionId },
        select: { title: true, workspace: { select: { slug: true, name: true } } },
      });
      if (!session) return;
      const payload = turnFinishedPushPayload({
        sessionId: event.sessionId,
        sessionTitle: session.title,
        workspace: session.workspace,
        isError: result.is_error === true,
        resultText: typeof result.result === "string" ? result.result : null,
      });
      await deps.sender.sendToUsers([userId], payload, (s) => shouldPushFinishedTurn(s, watching));
    })().catch(() => undefined);
  });
}

function isResult(payload: unknown): payload is { type: "result"; is_error?: boolean; result?: unknown } {
  return typeof payload === "object" && payload !== null && (payload as { type?: unknown }).type === "result";
}
