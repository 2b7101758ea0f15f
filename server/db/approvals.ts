/**
 * Approvals as the sidecar stores them: the row written before anyone is told of a request,
 * the conditional update that lets only the first decision win, workspace permission rules,
 * and the audit trail of every decision.
 */
import type { Db } from "./client";

/** An Approval row with what a view needs of its session and workspace. */
export interface ApprovalRow {
  id: string;
  sessionId: string;
  requestId: string;
  toolName: string;
  toolUseId: string | null;
  input: string;
  suggestions: string | null;
  decisionReason: string | null;
  blockedPath: string | null;
  status: string;
  decidedById: string | null;
  decidedAt: Date | null;
  finalInput: string | null;
  message: string | null;
  expiresAt: Date | null;
  createdAt: Date;
  decidedBy: { id: string; name: string } | null;
  session: { title: string | null; createdById: string; workspace: { id: string; slug: string; name: string } };
}

const rowColumns = {
  id: true,
  sessionId: true,
  requestId: true,
  toolName: true,
  toolUseId: true,
  input: true,
  suggestions: true,
  decisionReason: true,
  blockedPath: true,
  status: true,
  decidedById: true,
  decidedAt: true,
  finalInput: true,
  message: true,
  expiresAt: true,
  createdAt: true,
  decidedBy: { select: { id: true, name: true } },
  session: {
    select: { title: true, createdById: true, workspace: { select: { id: true, slug: true, name: true } } },
  },
} as const;

/** What a new approval needs to know about its session. */
export interface ApprovalContext {
  sessionId: string;
  title: string | null;
  createdById: string;
  workspace: { id: string; slug: string; name: string; rootPath: string; approvalDeadlineSec: number | null };
  members: { userId: string; role: string }[];
  rules: { toolName: string; ruleContent: string | null }[];
}

/** The session's workspace, its members and allow rules; undefined for a missing session. */
export async function findApprovalContext(db: Db, sessionId: string): Promise<ApprovalContext | undefined> {
  const row = await db.session.findUnique({
    where: { id: sessionId },
    select: {
      id: true,
      title: true,
      createdById: true,
      workspace: {
        select: {
          id: true,
          slug: true,
          name: true,
          rootPath: true,
          approvalDeadlineSec: true,
          memberships: { select: { userId: true, role: true } },
          permissionRules: { where: { behavior: "allow" }, select: { toolName: true, ruleContent: true } },
        },
      },
    },
  });
  if (!row) return undefined;
  const { memberships, permissionRules, ...workspace } = row.workspace;
  return {
    sessionId: row.id,
    title: row.title,
    createdById: row.createdById,
    workspace,
    members: memberships,
    rules: permissionRules,
  };
}

/** The columns a new approval is written with: the row's own fields, decision fields optional. */
export type NewApproval = Pick<
  ApprovalRow,
  | "id"
  | "sessionId"
  | "requestId"
  | "toolName"
  | "toolUseId"
  | "input"
  | "suggestions"
  | "decisionReason"
  | "blockedPath"
  | "status"
  | "expiresAt"
  | "createdAt"
> &
  Partial<Pick<ApprovalRow, "decidedAt" | "finalInput" | "message">>;

/** Stores a new approval (pending, or already allowed by a rule). */
export async function insertApproval(
  db: Db,
  data: NewApproval,
): Promise<void> {
  await db.approval.create({ data, select: { id: true } });
}

/**
 * Settles a pending approval. Returns false when it was no longer pending: someone else's
 * decision, the expiry or a cancel got there first, and this one changes nothing.
 */
export async function settleApproval(
  db: Db,
  id: string,
  fields: {
    status: string;
    decidedById: string | null;
    decidedAt: Date;
    finalInput: string | null;
    message: string | null;
  },
): Promise<boolean> {
  const { count } = await db.approval.updateMany({ where: { id, status: "pending" }, data: fields });
  return count === 1;
}

/** One approval with its session and workspace. */
export async function findApproval(db: Db, id: string): Promise<ApprovalRow | undefined> {
  return (await db.approval.findUnique({ where: { id }, select: rowColumns })) ?? undefined;
}

/** The most recent approvals of sessions in workspaces where the user may decide. */
export async function listRecentApprovals(db: Db, userId: string, limit: number): Promise<ApprovalRow[]> {
  return db.approval.findMany({
    where: {
      session: { workspace: { memberships: { some: { userId, role: { in: ["owner", "editor"] } } } } },
    },
    orderBy: { createdAt: "desc" },
    take: limit,
    select: rowColumns,
  });
}

/**
 * Cancels approvals left pending by an earlier run of this sidecar (their CLI is gone with it).
 * With a sidecar id, only those of sessions it owned (or that no sidecar claims).
 */
export async function cancelLeftoverApprovals(db: Db, message: string, now: Date, sidecarId?: string): Promise<number> {
  const where =
    sidecarId === undefined
      ? { status: "pending" }
      : { status: "pending", session: { OR: [{ sidecarId }, { sidecarId: null }] } };
  const { count } = await db.approval.updateMany({ where, data: { status: "cancelled", decidedAt: now, message } });
  return count;
}

/** Stores allow rules for a workspace (a rule already there is kept as it is). */
export async function addPermissionRules(
  db: Db,
  workspaceId: string,
  createdById: string,
  rules: readonly { toolName: string; ruleContent: string | null }[],
): Promise<void> {
  for (const rule of rules) {
    const exists = await db.permissionRule.findFirst({
      where: { workspaceId, toolName: rule.toolName, ruleContent: rule.ruleContent, behavior: "allow" },
      select: { id: true },
    });
    if (exists) continue;
    await db.permissionRule.create({
      data: { workspaceId, toolName: rule.toolName, ruleContent: rule.ruleContent, behavior: "allow", createdById },
      select: { id: true },
    });
  }
}

/** Writes one audit entry. */
export async function insertAuditLog(
  db: Db,
  entry: {
    actorId: string | null;
    action: string;
    objectType: string;
    objectId: string;
    workspaceId: string;
    details: unknown;
  },
): Promise<void> {
  await db.auditLog.create({
    data: { ...entry, details: JSON.stringify(entry.details) },
    select: { id: true },
  });
}

/** The user's role in the workspace of a session, or undefined when not a member. */
export async function findRoleForSession(db: Db, userId: string, sessionId: string): Promise<string | undefined> {
  const row = await db.session.findUnique({
    where: { id: sessionId },
    select: { workspace: { select: { memberships: { where: { userId }, select: { role: true } } } } },
  });
  return row?.workspace.memberships[0]?.role;
}

/**
 * The text of the session's last assistant message that has any (ExitPlanMode's plan when the
 * tool input carries none). Looks at the newest `cli` events only.
 */
export async function findLastAssistantText(db: Db, sessionId: string, lookBack = 200): Promise<string | null> {
  const rows = await db.sessionEvent.findMany({
    where: { sessionId, kind: "cli" },
    orderBy: { seq: "desc" },
    take: lookBack,
    select: { payload: true },
  });
  for (const row of rows) {
    let value: unknown;
    try {
      value = JSON.parse(row.payload);
    } catch {
      continue;
    }
    const message = value as { type?: string; message?: { content?: unknown } };
    if (message.type !== "assistant" || !Array.isArray(message.message?.content)) continue;
    const text = (message.message.content as { type?: string; text?: unknown }[])
      .filter((b) => b.type === "text" && typeof b.text === "string")
      .map((b) => b.text as string)
      .join("\n")
      .trim();
    if (text !== "") return text;
  }
  return null;
}
