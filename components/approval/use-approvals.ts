"use client";

/**
 * The tab's one approval inbox, shared by the header badge, the inbox page and any inline card:
 * one `approval:list` per (re)connect and one set of fact listeners on the shared socket,
 * however many components read it.
 */
import { useSyncExternalStore } from "react";
import type { ApprovalCount, ApprovalResolved, ApprovalView, Decision } from "@/server/shared/wire/approval";
import type { RoleWatchFact } from "@/server/shared/wire/role-watch";
import { getSocket } from "@/components/session/wire-client";
import { markLatency } from "@/components/session/latency-marks";
import { toolSummary } from "@/components/session/tool-card";
import { approvalFact, isApprovalView, listApprovals, sendDecision, type DecideOutcome } from "./approval-client";
import { reviewTitle } from "./file-review-display";
import { planSummary } from "./plan-display";
import { emptyInbox, pendingCount, reduceInbox, type InboxEvent, type InboxState } from "./inbox-state";

const roleChangedFact = "workspace:role" as const satisfies (typeof RoleWatchFact)["changed"];

let state: InboxState = emptyInbox;
let problem: string | undefined;
const listeners = new Set<() => void>();
let detach: (() => void) | undefined;
let refreshing: Promise<void> | undefined;
let refreshAgain = false;

function dispatch(event: InboxEvent): void {
  state = reduceInbox(state, event);
  for (const listener of listeners) listener();
}

/** Re-reads the inbox; a call while one is running makes it run once more after. */
function refresh(): Promise<void> {
  if (refreshing) {
    refreshAgain = true;
    return refreshing;
  }
  refreshing = (async () => {
    do {
      refreshAgain = false;
      const result = await listApprovals(getSocket());
      if (result.ok) {
        problem = undefined;
        dispatch({ type: "listed", approvals: result.approvals });
      } else {
        problem = result.message;
        for (const listener of listeners) listener();
      }
    } while (refreshAgain);
  })().finally(() => {
    refreshing = undefined;
  });
  return refreshing;
}

function attach(): () => void {
  const socket = getSocket();
  // Facts missed while disconnected are not replayed: every (re)connect re-reads the list.
  const onConnect = () => void refresh();
  const onRequested = (approval: ApprovalView) => {
    if (!isApprovalView(approval)) return;
    markLatency("approval-requested");
    const isNew = !state.approvals.some((a) => a.id === approval.id);
    dispatch({ type: "requested", approval });
    if (isNew && approval.status === "pending") notifyIfHidden(approval);
  };
  const onResolved = (resolved: ApprovalResolved) =>
    dispatch({ type: "resolved", resolved, at: new Date().toISOString() });
  const onCount = (count: ApprovalCount) => {
    if (typeof count?.pending === "number") dispatch({ type: "count", pending: count.pending });
  };
  socket.on("connect", onConnect);
  // a role changed (live-role.tsx): a demoted member's pending approvals were withdrawn, a promoted one's may come
  socket.on(roleChangedFact, onConnect);
  socket.on(approvalFact.requested, onRequested);
  socket.on(approvalFact.resolved, onResolved);
  socket.on(approvalFact.count, onCount);
  if (socket.connected) void refresh();
  else if (!socket.active) socket.connect();
  return () => {
    socket.off("connect", onConnect);
    socket.off(roleChangedFact, onConnect);
    socket.off(approvalFact.requested, onRequested);
    socket.off(approvalFact.resolved, onResolved);
    socket.off(approvalFact.count, onCount);
  };
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  detach ??= attach();
  return () => {
    listeners.delete(listener);
    if (listeners.size === 0) {
      detach?.();
      detach = undefined;
      // The next subscriber re-reads the list: facts were not followed in between.
      state = { ...state, loaded: false };
    }
  };
}

export interface ApprovalsSnapshot {
  /** Pending first, then newest first. */
  approvals: ApprovalView[];
  loaded: boolean;
  pending: number;
  /** Why the last list failed, if it did. */
  problem: string | undefined;
}

let snapshot: ApprovalsSnapshot = { approvals: [], loaded: false, pending: 0, problem: undefined };
let snapshotOf: InboxState | undefined;
let snapshotProblem: string | undefined;
const serverSnapshot: ApprovalsSnapshot = snapshot;

function getSnapshot(): ApprovalsSnapshot {
  if (snapshotOf !== state || snapshotProblem !== problem) {
    snapshotOf = state;
    snapshotProblem = problem;
    snapshot = { approvals: state.approvals, loaded: state.loaded, pending: pendingCount(state), problem };
  }
  return snapshot;
}

/** The caller's approvals, live. Filter by `sessionId` to show a session's pending cards inline. */
export function useApprovals(): ApprovalsSnapshot {
  return useSyncExternalStore(subscribe, getSnapshot, () => serverSnapshot);
}

/**
 * Decides one approval and updates the inbox from the answer. A refusal because someone else
 * was faster (or the deadline passed) re-reads the inbox, so the card shows the real outcome.
 */
export async function decideApproval(approvalId: string, decision: Decision): Promise<DecideOutcome> {
  const { outcome, view } = await sendDecision(getSocket(), approvalId, decision);
  if (outcome.ok) {
    const current = state.approvals.find((a) => a.id === approvalId);
    if (view) dispatch({ type: "decided", approval: view });
    else if (current?.status === "pending") {
      dispatch({
        type: "decided",
        approval: {
          ...current,
          status: decision.behavior === "allow" ? "allowed" : "denied",
          decidedAt: new Date().toISOString(),
          message: decision.behavior === "deny" ? (decision.message ?? null) : null,
        },
      });
    }
  } else if (outcome.code === "already_decided" || outcome.code === "expired" || outcome.code === "not_found") {
    void refresh();
  }
  return outcome;
}

/** One line naming what an approval is about: the file, the command, the question. */
export function approvalSummary(approval: ApprovalView): string {
  if (approval.review) return reviewTitle(approval.review, approval.workspace.rootPath);
  if (approval.toolName === "ExitPlanMode") return planSummary(approval.plan);
  return toolSummary(approval.toolName, approval.input, approval.workspace.rootPath);
}

function notifyIfHidden(approval: ApprovalView): void {
  if (typeof document === "undefined" || !document.hidden) return;
  if (typeof Notification === "undefined" || Notification.permission !== "granted") return;
  try {
    // The tag makes the OS show one notification however many tabs receive the fact.
    const n = new Notification(`Approval needed: ${approval.toolName}`, {
      body: [approval.workspace.name, approvalSummary(approval)].filter(Boolean).join(" · "),
      tag: `approval-${approval.id}`,
    });
    n.onclick = () => {
      window.focus();
      if (window.location.pathname !== "/inbox") window.location.assign("/inbox");
      n.close();
    };
  } catch {
    // Some browsers allow notifications only from a service worker; the badge still counts.
  }
}
