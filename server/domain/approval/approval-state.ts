import type { CanUseToolRequest, JsonObject, PermissionUpdate } from "@/server/shared/claude-protocol/messages";
import { type PermissionDecision, ZPermissionDecision } from "@/server/shared/claude-protocol/encode";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import { canPerform, type Role, WorkspaceAction } from "@/server/domain/workspace/roles";
import { type DenyDecision, expiryDenial } from "./answers";

/**
 * The life of one approval (one `can_use_tool` request), as pure functions over an immutable
 * record; the clock is passed in as `now` (milliseconds).
 *
 *   pending ──decide──► allowed | denied
 *      ├──── deadline ──► expired     (Conduit answers deny, with a message that says so)
 *      └──── cancel ────► cancelled   (interrupt, process exit, sidecar restart: nobody to answer)
 *
 * The CLI waits forever for an answer (protocol reference §6.1), so Conduit owns the time:
 * `expiresAt` comes from the workspace deadline. The first decision wins; anything after it,
 * or after the deadline, is refused with `already_decided` / `expired` and changes nothing.
 */

/** Approval statuses (the values stored in `Approval.status`). */
export const ApprovalStatus = {
  pending: "pending",
  allowed: "allowed",
  denied: "denied",
  expired: "expired",
  cancelled: "cancelled",
} as const;
/** One of {@link ApprovalStatus}. */
export type ApprovalStatus = (typeof ApprovalStatus)[keyof typeof ApprovalStatus];

/** Why a pending approval was cancelled. No answer goes to the CLI for these. */
export const CancelReason = {
  /** Someone interrupted the turn; the CLI withdrew the request (`control_cancel_request`). */
  interrupted: "interrupted",
  /** The CLI child exited (crash, stop, cull) with the request open. */
  processExited: "process-exited",
  /** The sidecar restarted: the CLI that asked is gone with it. */
  sidecarRestarted: "sidecar-restarted",
} as const;
/** One of {@link CancelReason}. */
export type CancelReason = (typeof CancelReason)[keyof typeof CancelReason];

const cancelMessages: Record<CancelReason, string> = {
  interrupted: "Cancelled: the turn was interrupted before anyone answered.",
  "process-exited": "Cancelled: the Claude Code process ended before anyone answered.",
  "sidecar-restarted": "Cancelled: the server restarted, and the Claude Code process that asked is gone.",
};

/** What every approval carries from the moment it is stored. */
export interface ApprovalCore {
  id: string;
  sessionId: string;
  /** The CLI's `request_id`: the answer's address. */
  requestId: string;
  toolName: string;
  toolUseId: string | null;
  /** The input the model proposed. */
  input: JsonObject;
  suggestions: readonly PermissionUpdate[];
  description: string | null;
  decisionReason: string | null;
  blockedPath: string | null;
  /** Set for a subagent's tool call. */
  agentId: string | null;
  /** AskUserQuestion, ExitPlanMode: a person must answer. */
  requiresUserInteraction: boolean;
  /** Who started the session (first in the routing). */
  sessionStarterId: string;
  createdAt: number;
  /** The workspace deadline in force when the request arrived; null = never expires. */
  deadlineSeconds: number | null;
  /** `createdAt + deadline`, or null. */
  expiresAt: number | null;
}

/** The proposed and approved text of a reviewed Edit/Write, kept with the decision. */
export interface FileReviewRecord {
  filePath: string;
  proposed: string;
  approved: string;
}

/** An approval: a discriminated union on `status`. */
export type Approval =
  | (ApprovalCore & { status: "pending" })
  | (ApprovalCore & {
      status: "allowed";
      decidedById: string;
      decidedAt: number;
      /** The answer sent; `answer.updatedInput` is the final input. */
      answer: Extract<PermissionDecision, { behavior: "allow" }>;
      review: FileReviewRecord | null;
    })
  | (ApprovalCore & {
      status: "denied";
      decidedById: string;
      decidedAt: number;
      answer: DenyDecision;
      review: null;
    })
  | (ApprovalCore & { status: "expired"; decidedAt: number; answer: DenyDecision })
  | (ApprovalCore & { status: "cancelled"; decidedAt: number; cancelReason: CancelReason; message: string });

/** A pending approval. */
export type PendingApproval = Extract<Approval, { status: "pending" }>;

/** A workspace member as routing and authorization see them. */
export interface ApprovalMember {
  userId: string;
  role: Role;
}

/** The deadline's end, or null for "never". Rejects a deadline that is not a positive number. */
export function approvalExpiresAt(createdAt: number, deadlineSeconds: number | null): number | null {
  if (deadlineSeconds === null) return null;
  if (!Number.isFinite(deadlineSeconds) || deadlineSeconds <= 0) {
    throw new AppError(ErrorCode.invalidPayload, "The approval deadline must be a positive number of seconds.");
  }
  return createdAt + deadlineSeconds * 1000;
}

/** A new pending approval for a `can_use_tool` request. Store it before anyone is told. */
export function createApproval(args: {
  id: string;
  sessionId: string;
  requestId: string;
  request: CanUseToolRequest;
  sessionStarterId: string;
  deadlineSeconds: number | null;
  now: number;
}): PendingApproval {
  const { request } = args;
  return {
    status: "pending",
    id: args.id,
    sessionId: args.sessionId,
    requestId: args.requestId,
    toolName: request.tool_name,
    toolUseId: request.tool_use_id ?? null,
    input: request.input,
    suggestions: request.permission_suggestions ?? [],
    description: request.description ?? null,
    decisionReason: request.decision_reason ?? null,
    blockedPath: request.blocked_path ?? null,
    agentId: request.agent_id ?? null,
    requiresUserInteraction: request.requires_user_interaction ?? false,
    sessionStarterId: args.sessionStarterId,
    createdAt: args.now,
    deadlineSeconds: args.deadlineSeconds,
    expiresAt: approvalExpiresAt(args.now, args.deadlineSeconds),
  };
}

/**
 * May this member decide? Owners and editors may; viewers never, not even a session's
 * starter who has since become a viewer. Someone who is no longer a member (`role` null) may
 * not either.
 */
export function mayDecide(role: Role | null): boolean {
  return role !== null && canPerform(role, WorkspaceAction.steer);
}

/**
 * The users whose inbox shows the approval: the session's starter first (if still allowed
 * to decide), then the workspace's owners and editors, each once.
 */
export function routeApproval(args: { sessionStarterId: string; members: readonly ApprovalMember[] }): string[] {
  const deciders = args.members.filter((m) => mayDecide(m.role)).map((m) => m.userId);
  const ordered = deciders.includes(args.sessionStarterId)
    ? [args.sessionStarterId, ...deciders.filter((id) => id !== args.sessionStarterId)]
    : deciders;
  return [...new Set(ordered)];
}

/** True when the approval is pending and its deadline has passed at `now`. */
export function isDue(approval: Approval, now: number): boolean {
  return approval.status === "pending" && approval.expiresAt !== null && approval.expiresAt <= now;
}

/** The pending approvals whose deadline has passed, earliest first. */
export function dueForExpiry(approvals: readonly Approval[], now: number): PendingApproval[] {
  return approvals
    .filter((a): a is PendingApproval => isDue(a, now))
    .sort((a, b) => (a.expiresAt ?? 0) - (b.expiresAt ?? 0));
}

/** When the next pending approval expires (for one timer), or null when none will. */
export function nextExpiryAt(approvals: readonly Approval[]): number | null {
  let next: number | null = null;
  for (const a of approvals) {
    if (a.status !== "pending" || a.expiresAt === null) continue;
    if (next === null || a.expiresAt < next) next = a.expiresAt;
  }
  return next;
}

/** Milliseconds left before the deadline (0 once due), or null when it never expires. */
export function remainingMs(approval: Approval, now: number): number | null {
  if (approval.expiresAt === null) return null;
  return Math.max(0, approval.expiresAt - now);
}

/**
 * Records a person's decision. Checks, in order: the decider's role (`forbidden`), that the
 * approval is still open (`expired` if it expired, `already_decided` otherwise), the deadline
 * (`expired`: a late click loses even if the expiry sweep has not run yet; the caller then
 * expires it), and that the answer is one the CLI accepts (`invalid_payload`).
 */
export function decideApproval(
  approval: Approval,
  decision: { userId: string; role: Role | null; answer: PermissionDecision; review?: FileReviewRecord | null },
  now: number,
): Approval {
  if (!mayDecide(decision.role)) {
    throw new AppError(ErrorCode.forbidden, "Only the workspace's owners and editors may answer tool requests.");
  }
  if (approval.status === "expired") {
    throw new AppError(ErrorCode.expired, "This request expired before your answer arrived.");
  }
  if (approval.status !== "pending") {
    throw new AppError(ErrorCode.alreadyDecided, alreadyDecidedMessage(approval));
  }
  if (isDue(approval, now)) {
    throw new AppError(ErrorCode.expired, "This request expired before your answer arrived.");
  }
  const parsed = ZPermissionDecision.safeParse(decision.answer);
  if (!parsed.success) {
    throw new AppError(ErrorCode.invalidPayload, "This answer cannot be sent to the CLI.", parsed.error.issues);
  }
  const answer = parsed.data;
  const core = coreOf(approval);
  if (answer.behavior === "allow") {
    return {
      ...core,
      status: "allowed",
      decidedById: decision.userId,
      decidedAt: now,
      answer,
      review: decision.review ?? null,
    };
  }
  return { ...core, status: "denied", decidedById: decision.userId, decidedAt: now, answer, review: null };
}

/**
 * Expires a pending approval whose deadline has passed; its `answer` is the deny to send.
 * Anything else (decided, cancelled, not yet due, never expiring) is returned unchanged, so a
 * sweep that races a decision does no harm.
 */
export function expireApproval(approval: Approval, now: number): Approval {
  if (!isDue(approval, now) || approval.deadlineSeconds === null) return approval;
  return { ...coreOf(approval), status: "expired", decidedAt: now, answer: expiryDenial(approval.deadlineSeconds) };
}

/** Cancels a pending approval; anything already settled is returned unchanged. */
export function cancelApproval(approval: Approval, reason: CancelReason, now: number): Approval {
  if (approval.status !== "pending") return approval;
  return {
    ...coreOf(approval),
    status: "cancelled",
    decidedAt: now,
    cancelReason: reason,
    message: cancelMessages[reason],
  };
}

/**
 * Cancels every pending approval in the list (e.g. all of a session's on process exit, or
 * all of them after a sidecar restart). Returns the new list and the ones that changed.
 */
export function cancelPendingApprovals(
  approvals: readonly Approval[],
  reason: CancelReason,
  now: number,
): { approvals: Approval[]; cancelled: Approval[] } {
  const cancelled: Approval[] = [];
  const next = approvals.map((a) => {
    const updated = cancelApproval(a, reason, now);
    if (updated !== a) cancelled.push(updated);
    return updated;
  });
  return { approvals: next, cancelled };
}

/** The message that explains a cancellation reason. */
export function describeCancelReason(reason: CancelReason): string {
  return cancelMessages[reason];
}

function alreadyDecidedMessage(approval: Exclude<Approval, PendingApproval>): string {
  switch (approval.status) {
    case "allowed":
      return "This request was already allowed.";
    case "denied":
      return "This request was already denied.";
    case "cancelled":
      return `This request is closed. ${approval.message}`;
    case "expired":
      return "This request expired.";
  }
}

function coreOf(approval: Approval): ApprovalCore {
  return {
    id: approval.id,
    sessionId: approval.sessionId,
    requestId: approval.requestId,
    toolName: approval.toolName,
    toolUseId: approval.toolUseId,
    input: approval.input,
    suggestions: approval.suggestions,
    description: approval.description,
    decisionReason: approval.decisionReason,
    blockedPath: approval.blockedPath,
    agentId: approval.agentId,
    requiresUserInteraction: approval.requiresUserInteraction,
    sessionStarterId: approval.sessionStarterId,
    createdAt: approval.createdAt,
    deadlineSeconds: approval.deadlineSeconds,
    expiresAt: approval.expiresAt,
  };
}
