/**
 * The approval queue's records and views: the Approval row fields of a question, the wire
 * `ApprovalView` of a pending question and of a stored row, and the labels of the "remember"
 * options.
 *
 * Owns: shaping data. Must not: read or write anything, or decide anything.
 */
import type { ApprovalContext, ApprovalRow } from "@/server/db/approvals";
import { ruleLabel, workspaceRulesFromSuggestion } from "@/server/domain/approval/answers";
import type { PendingApproval } from "@/server/domain/approval/approval-state";
import type { CanUseToolRequest, PermissionUpdate } from "@/server/shared/claude-protocol/messages";
import type { ApprovalResolved, ApprovalStatus, ApprovalView, FileReview, RememberOption } from "@/server/shared/wire/approval";

/** The Approval row's fields of a question (`agent`: the subagent that asked, see `PermissionQuestion`). */
export function rowFields(
  id: string,
  sessionId: string,
  requestId: string,
  request: CanUseToolRequest,
  now: number,
  agent?: { id: string; description: string | null },
) {
  return {
    id,
    sessionId,
    requestId,
    toolName: request.tool_name,
    toolUseId: request.tool_use_id ?? null,
    input: JSON.stringify(request.input),
    suggestions: request.permission_suggestions ? JSON.stringify(request.permission_suggestions) : null,
    decisionReason: request.decision_reason ?? null,
    blockedPath: request.blocked_path ?? null,
    agentId: agent?.id ?? request.agent_id ?? null,
    agentDescription: agent?.description ?? null,
    createdAt: new Date(now),
  };
}


export function viewOf(
  approval: PendingApproval,
  context: ApprovalContext,
  extra: { review: FileReview | null; plan: string | null; planNote?: string | null; agentDescription: string | null },
): ApprovalView {
  return {
    id: approval.id,
    sessionId: approval.sessionId,
    workspace: { id: context.workspace.id, slug: context.workspace.slug, name: context.workspace.name, rootPath: context.workspace.rootPath },
    sessionTitle: context.title,
    toolName: approval.toolName,
    input: approval.input,
    reason: approval.decisionReason ?? approval.description,
    blockedPath: approval.blockedPath,
    subagent: approval.agentId === null ? null : { description: extra.agentDescription },
    rememberOptions: rememberOptionsOf(approval.suggestions),
    status: "pending",
    createdAt: new Date(approval.createdAt).toISOString(),
    expiresAt: approval.expiresAt === null ? null : new Date(approval.expiresAt).toISOString(),
    decidedBy: null,
    decidedAt: null,
    message: null,
    finalInput: null,
    review: extra.review,
    plan: extra.plan,
    ...(extra.planNote ? { planNote: extra.planNote } : {}),
  };
}


/** A view rebuilt from a stored row (a decided approval this sidecar did not settle). */
/** The `approval:resolved` fact of a settled approval's view. */
export function resolvedFactOf(view: ApprovalView): ApprovalResolved {
  return {
    approvalId: view.id,
    sessionId: view.sessionId,
    status: view.status,
    decidedBy: view.decidedBy,
    message: view.message,
    decidedAt: view.decidedAt,
    finalInput: view.finalInput,
    approval: view,
  };
}

export function viewOfRow(row: ApprovalRow): ApprovalView {
  const input = parseObject(row.input) ?? {};
  const suggestions = (safeJson(row.suggestions ?? "null") as PermissionUpdate[] | null) ?? [];
  return {
    id: row.id,
    sessionId: row.sessionId,
    workspace: {
      id: row.session.workspace.id,
      slug: row.session.workspace.slug,
      name: row.session.workspace.name,
      rootPath: row.session.workspace.rootPath,
    },
    sessionTitle: row.session.title,
    toolName: row.toolName,
    input,
    reason: row.decisionReason,
    blockedPath: row.blockedPath,
    subagent: row.agentId === null ? null : { description: row.agentDescription },
    rememberOptions: rememberOptionsOf(suggestions),
    status: row.status as ApprovalStatus,
    createdAt: row.createdAt.toISOString(),
    expiresAt: row.expiresAt?.toISOString() ?? null,
    decidedBy: row.decidedBy,
    decidedAt: row.decidedAt?.toISOString() ?? null,
    message: row.message,
    finalInput: row.finalInput === null ? null : parseObject(row.finalInput),
    review: null,
    ...planOfRow(row.toolName, input),
  };
}

/** A stored ExitPlanMode's plan: the request's, else a note that the record does not keep it. */
function planOfRow(toolName: string, input: Record<string, unknown>): { plan: string | null; planNote?: string } {
  if (toolName !== "ExitPlanMode") return { plan: null };
  if (typeof input.plan === "string" && input.plan.trim() !== "") return { plan: input.plan };
  return { plan: null, planNote: "Claude Code's request carried no plan text, and this record keeps only the request." };
}


export function rememberOptionsOf(suggestions: readonly PermissionUpdate[]): RememberOption[] {
  return suggestions.map((s, index) => ({
    index,
    label: describeSuggestion(s),
    workspaceScope: workspaceRulesFromSuggestion(s).length > 0,
  }));
}


/**
 * What choosing a suggestion remembers, as a phrase the card puts after "or remember:" and before
 * its scope ("in this session"): "allow Bash(npm test:*)", "accept-edits mode (file edits without asking)".
 */
function describeSuggestion(s: PermissionUpdate): string {
  switch (s.type) {
    case "setMode":
      return modePhrases[s.mode] ?? `${s.mode} mode`;
    case "addDirectories":
      return `access to ${s.directories.join(", ")}`;
    case "removeDirectories":
      return `no access to ${s.directories.join(", ")}`;
    default: {
      const rules = s.rules.map(ruleLabel).join(", ");
      const verb = s.behavior === "allow" ? "allow" : s.behavior === "deny" ? "deny" : "ask for";
      return `${verb} ${rules}`;
    }
  }
}

const modePhrases: Record<string, string> = {
  acceptEdits: "accept-edits mode (file edits without asking)",
  plan: "plan mode",
  bypassPermissions: "bypass mode (nothing asked)",
  default: "default mode",
};


function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}


function parseObject(text: string): Record<string, unknown> | null {
  const value = safeJson(text);
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;
}
