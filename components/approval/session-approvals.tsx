"use client";

import { ApprovalCard } from "./approval-card";
import { decideApproval, useApprovals } from "./use-approvals";

/**
 * The caller's pending approvals for one session, as cards to mount inline in the conversation.
 * Only people who may decide get approvals routed to them, so viewers see nothing here.
 */
export function SessionApprovals({ sessionId }: { sessionId: string }) {
  const { approvals } = useApprovals();
  const pending = approvals.filter((a) => a.sessionId === sessionId && a.status === "pending");
  if (pending.length === 0) return null;
  return (
    <div data-testid="session-approvals" className="space-y-3">
      {pending.map((a) => (
        <ApprovalCard
          key={a.id}
          approval={a}
          showContext={false}
          onDecide={(decision) => decideApproval(a.id, decision)}
        />
      ))}
    </div>
  );
}
