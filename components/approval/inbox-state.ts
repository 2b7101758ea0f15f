/**
 * The caller's approval inbox as a pure reducer over the socket's answers and facts, so the
 * ordering and merging rules are tested without a socket.
 */
import type { ApprovalResolved, ApprovalView } from "@/server/shared/wire/approval";

export interface InboxState {
  approvals: ApprovalView[];
  /** True once the first `approval:list` answered. */
  loaded: boolean;
  /** The last `approval:count` fact since the last list, which the server sends on every change. */
  pendingFromServer: number | undefined;
}

export type InboxEvent =
  | { type: "listed"; approvals: ApprovalView[] }
  | { type: "requested"; approval: ApprovalView }
  | { type: "resolved"; resolved: ApprovalResolved; at: string }
  /** The decide ack carried the record, or the page patched it from its own decision. */
  | { type: "decided"; approval: ApprovalView }
  | { type: "count"; pending: number };

export const emptyInbox: InboxState = { approvals: [], loaded: false, pendingFromServer: undefined };

/** Pending first, then newest first. */
export function orderApprovals(approvals: readonly ApprovalView[]): ApprovalView[] {
  return [...approvals].sort((a, b) => {
    const pa = a.status === "pending" ? 0 : 1;
    const pb = b.status === "pending" ? 0 : 1;
    if (pa !== pb) return pa - pb;
    return Date.parse(b.createdAt) - Date.parse(a.createdAt) || (a.id < b.id ? 1 : -1);
  });
}

function upsert(approvals: readonly ApprovalView[], next: ApprovalView): ApprovalView[] {
  const index = approvals.findIndex((a) => a.id === next.id);
  if (index === -1) return orderApprovals([...approvals, next]);
  const current = approvals[index]!;
  // A replayed `requested` must not bring a decided approval back to pending.
  if (current.status !== "pending" && next.status === "pending") return [...approvals];
  const copy = [...approvals];
  copy[index] = next;
  return orderApprovals(copy);
}

export function reduceInbox(state: InboxState, event: InboxEvent): InboxState {
  switch (event.type) {
    case "listed":
      return { approvals: orderApprovals(event.approvals), loaded: true, pendingFromServer: undefined };
    case "requested":
    case "decided":
      return { ...state, approvals: upsert(state.approvals, event.approval) };
    case "resolved": {
      const { resolved } = event;
      if (resolved.approval) return { ...state, approvals: upsert(state.approvals, resolved.approval) };
      const current = state.approvals.find((a) => a.id === resolved.approvalId);
      if (!current) return state;
      const next: ApprovalView = {
        ...current,
        status: resolved.status,
        decidedBy: resolved.decidedBy ?? current.decidedBy,
        message: resolved.message ?? current.message,
        decidedAt: resolved.decidedAt ?? current.decidedAt ?? event.at,
        finalInput: resolved.finalInput ?? current.finalInput,
      };
      const copy = state.approvals.map((a) => (a.id === next.id ? next : a));
      return { ...state, approvals: orderApprovals(copy) };
    }
    case "count":
      return { ...state, pendingFromServer: event.pending };
  }
}

/** The number the header badge shows. */
export function pendingCount(state: InboxState): number {
  return state.pendingFromServer ?? state.approvals.filter((a) => a.status === "pending").length;
}
