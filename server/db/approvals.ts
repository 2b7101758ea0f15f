/**
 * Approvals as the sidecar stores them: the row written before anyone is told of a request,
 * the conditional update that lets only the first decision win, workspace permission rules,
 * and the audit trail of every decision.
 */
import { randomUUID } from "node:crypto";
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
  /** Asked by a subagent: the CLI's agent_id, and its task's description when the CLI gave one. */
  agentId: string | null;
  agentDescription: string | null;
  status: string;
  decidedById: string | null;
  decidedAt: Date | null;
  finalInput: string | null;
  message: string | null;
  expiresAt: Date | null;
  createdAt: Date;
  decidedBy: { id: string; name: string } | null;
  session: { title: string | null; createdById: string; workspace: { id: string; slug: string; name: string; rootPath: string } };
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
  agentId: true,
  agentDescription: true,
  status: true,
  decidedById: true,
  decidedAt: true,
  finalInput: true,
  message: true,
  expiresAt: true,
  createdAt: true,
  decidedBy: { select: { id: true, name: true } },
  session: {
    select: { title: true, createdById: true, workspace: { select: { id: true, slug: true, name: true, rootPath: true } } },
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

/**
 * The session's workspace, its members and allow rules; undefined for a missing session. Read
 * fresh for every request (so a rule or membership change applies to the next one) in ONE
 * statement, a consistent snapshot: the session row, then a row per member (`m`), then a row
 * per allow rule (`r`), in shared text columns. Prisma's nested relation loading costs about
 * five times as much, on the path every tool call waits on.
 */
export async function findApprovalContext(db: Db, sessionId: string): Promise<ApprovalContext | undefined> {
  const rows = await db.$queryRaw<
    {
      k: string;
      a: string | null;
      b: string | null;
      c: string | null;
      d: string | null;
      e: string | null;
      f: string | null;
      n: number | bigint | null;
    }[]
  >`SELECT 's' AS "k", s."title" AS "a", s."createdById" AS "b", w."id" AS "c", w."slug" AS "d", w."name" AS "e", w."rootPath" AS "f", w."approvalDeadlineSec" AS "n"
      FROM "Session" s JOIN "Workspace" w ON w."id" = s."workspaceId" WHERE s."id" = ${sessionId}
    UNION ALL SELECT 'm', m."userId", m."role", NULL, NULL, NULL, NULL, NULL
      FROM "Membership" m JOIN "Session" s ON m."workspaceId" = s."workspaceId" WHERE s."id" = ${sessionId}
    UNION ALL SELECT 'r', r."toolName", r."ruleContent", NULL, NULL, NULL, NULL, NULL
      FROM "PermissionRule" r JOIN "Session" s ON r."workspaceId" = s."workspaceId" WHERE s."id" = ${sessionId} AND r."behavior" = 'allow'`;
  const head = rows.find((r) => r.k === "s");
  if (!head) return undefined;
  return {
    sessionId,
    title: head.a,
    createdById: head.b!,
    workspace: {
      id: head.c!,
      slug: head.d!,
      name: head.e!,
      rootPath: head.f!,
      approvalDeadlineSec: head.n === null ? null : Number(head.n),
    },
    members: rows.filter((r) => r.k === "m").map((r) => ({ userId: r.a!, role: r.b! })),
    rules: rows.filter((r) => r.k === "r").map((r) => ({ toolName: r.a!, ruleContent: r.b })),
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
  Partial<Pick<ApprovalRow, "agentId" | "agentDescription" | "decidedAt" | "finalInput" | "message">>;

/** Stores a new approval (pending, or already allowed by a rule). */
export async function insertApproval(db: Db, data: NewApproval): Promise<void> {
  // One flat INSERT (Prisma's `create` costs about four times the CPU, on the path every tool call waits on).
  await db.$executeRaw`INSERT INTO "Approval" ("id", "sessionId", "requestId", "toolName", "toolUseId", "input", "suggestions", "decisionReason", "blockedPath", "agentId", "agentDescription", "status", "expiresAt", "createdAt", "decidedAt", "finalInput", "message")
    VALUES (${data.id}, ${data.sessionId}, ${data.requestId}, ${data.toolName}, ${data.toolUseId}, ${data.input}, ${data.suggestions}, ${data.decisionReason}, ${data.blockedPath}, ${data.agentId ?? null}, ${data.agentDescription ?? null}, ${data.status}, ${data.expiresAt}, ${data.createdAt}, ${data.decidedAt ?? null}, ${data.finalInput ?? null}, ${data.message ?? null})`;
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
  // One flat conditional UPDATE (Prisma's updateMany costs several times the CPU, on every decision).
  const count =
    await db.$executeRaw`UPDATE "Approval" SET "status" = ${fields.status}, "decidedById" = ${fields.decidedById}, "decidedAt" = ${fields.decidedAt}, "finalInput" = ${fields.finalInput}, "message" = ${fields.message}
    WHERE "id" = ${id} AND "status" = 'pending'`;
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
  // Written for every decision: one flat INSERT instead of Prisma's `create` (a quarter of the CPU).
  await db.$executeRaw`INSERT INTO "AuditLog" ("id", "actorId", "action", "objectType", "objectId", "workspaceId", "details", "at")
    VALUES (${randomUUID()}, ${entry.actorId}, ${entry.action}, ${entry.objectType}, ${entry.objectId}, ${entry.workspaceId}, ${JSON.stringify(entry.details)}, ${new Date()})`;
}

/** The user's role in the workspace of a session, or undefined when not a member. */
export async function findRoleForSession(db: Db, userId: string, sessionId: string): Promise<string | undefined> {
  // Read for every decision (DESIGN rule 9), so one flat join rather than nested relation loading.
  const [row] = await db.$queryRaw<{ role: string }[]>`SELECT m."role" FROM "Session" s
    JOIN "Membership" m ON m."workspaceId" = s."workspaceId" WHERE s."id" = ${sessionId} AND m."userId" = ${userId}`;
  return row?.role;
}

/**
 * The `plan` the model put in its ExitPlanMode call `toolUseId`, as the session's log kept the
 * CLI's assistant message (the CLI's request carries none when it kept no plan file). Null when
 * the log has no such call or it carried no plan. Never another message's text.
 */
export async function findStreamedPlan(db: Db, sessionId: string, toolUseId: string): Promise<string | null> {
  const rows = await db.sessionEvent.findMany({
    where: { sessionId, kind: "cli", payload: { contains: JSON.stringify(toolUseId) } },
    orderBy: { seq: "desc" },
    take: 5,
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
    for (const block of message.message.content as { type?: string; id?: unknown; name?: unknown; input?: { plan?: unknown } }[]) {
      if (block.type !== "tool_use" || block.id !== toolUseId || block.name !== "ExitPlanMode") continue;
      const plan = block.input?.plan;
      return typeof plan === "string" && plan.trim() !== "" ? plan : null;
    }
  }
  return null;
}

/**
 * Pending approvals the user may answer now, on every sidecar: in workspaces where they are an
 * owner or editor (every such member is a recipient, `routeApproval`). A cluster's inbox count.
 */
export async function countPendingApprovalsFor(db: Db, userId: string): Promise<number> {
  return db.approval.count({
    where: {
      status: "pending",
      session: { workspace: { memberships: { some: { userId, role: { in: ["owner", "editor"] } } } } },
    },
  });
}
