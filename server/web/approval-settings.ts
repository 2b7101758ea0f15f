/**
 * A workspace's approval settings as the web app shows and changes them: the deadline after
 * which the sidecar answers "deny" for everyone, and the rules "Allow and remember" stored for
 * the workspace. The sidecar reads both fresh for every question, so a change here applies to
 * the next one; nothing is cached on this side either.
 */
import { z } from "zod";
import { getDb } from "@/server/db/client";
import { ruleLabel } from "@/server/domain/approval/answers";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import type { ApprovalSettingsView } from "@/server/shared/wire/approval";
import { requireWorkspaceAccess } from "@/server/web/workspaces";

/** The shortest deadline an owner may set: anything shorter expires before a person can read the card. */
export const MIN_APPROVAL_DEADLINE_SEC = 30;
/** The longest deadline an owner may set (7 days); longer than that, "never" says it honestly. */
export const MAX_APPROVAL_DEADLINE_SEC = 7 * 24 * 60 * 60;

/** A deadline in whole seconds between the bounds, or null for "never". */
export const ZApprovalDeadlineSec = z
  .number("The approval deadline must be a number of seconds, or null for never.")
  .int("The approval deadline must be a whole number of seconds.")
  .min(MIN_APPROVAL_DEADLINE_SEC, `The approval deadline must be at least ${MIN_APPROVAL_DEADLINE_SEC} seconds.`)
  .max(
    MAX_APPROVAL_DEADLINE_SEC,
    `The approval deadline can be at most 7 days (${MAX_APPROVAL_DEADLINE_SEC} seconds); use null for never.`,
  )
  .nullable();

/** `{ approvalDeadlineSec: 30…604800 | null }`; null means approvals never expire. */
export const ZApprovalDeadlineInput = z.object({ approvalDeadlineSec: ZApprovalDeadlineSec });
export type ApprovalDeadlineInput = z.infer<typeof ZApprovalDeadlineInput>;

/** The workspace's deadline and remembered rules (any member may read). */
export async function readApprovalSettings(userId: string, slug: string): Promise<ApprovalSettingsView> {
  const ws = await requireWorkspaceAccess(userId, slug, "read");
  const db = getDb();
  const [workspace, rules] = await Promise.all([
    db.workspace.findUniqueOrThrow({ where: { id: ws.id }, select: { approvalDeadlineSec: true } }),
    db.permissionRule.findMany({ where: { workspaceId: ws.id }, orderBy: [{ createdAt: "desc" }, { id: "asc" }] }),
  ]);
  // PermissionRule.createdById has no relation (a rule outlives its author's account), so one lookup.
  const authorIds = [...new Set(rules.map((r) => r.createdById))];
  const authors =
    authorIds.length === 0
      ? []
      : await db.user.findMany({ where: { id: { in: authorIds } }, select: { id: true, name: true, email: true } });
  const byId = new Map(authors.map((a) => [a.id, a]));
  return {
    approvalDeadlineSec: workspace.approvalDeadlineSec,
    rules: rules.map((r) => ({
      id: r.id,
      toolName: r.toolName,
      ruleContent: r.ruleContent,
      label: ruleLabel(r),
      behavior: r.behavior,
      createdAt: r.createdAt.toISOString(),
      createdBy: byId.get(r.createdById) ?? null,
    })),
  };
}

/** Sets the workspace's approval deadline (owners only); approvals already waiting keep theirs. */
export async function setApprovalDeadline(
  userId: string,
  slug: string,
  input: ApprovalDeadlineInput,
): Promise<ApprovalSettingsView> {
  const ws = await requireWorkspaceAccess(userId, slug, "manageSettings");
  await getDb().$transaction(async (tx) => {
    const before = await tx.workspace.findUniqueOrThrow({
      where: { id: ws.id },
      select: { approvalDeadlineSec: true },
    });
    await tx.workspace.update({ where: { id: ws.id }, data: { approvalDeadlineSec: input.approvalDeadlineSec } });
    await tx.auditLog.create({
      data: {
        actorId: userId,
        action: "workspace.approvalDeadline",
        objectType: "workspace",
        objectId: ws.id,
        workspaceId: ws.id,
        details: JSON.stringify({ from: before.approvalDeadlineSec, to: input.approvalDeadlineSec }),
      },
    });
  });
  return readApprovalSettings(userId, slug);
}

/**
 * Deletes one of the workspace's rules (owners only). A rule of another workspace is not_found,
 * like an unknown id: the id alone never reaches across workspaces.
 */
export async function revokePermissionRule(userId: string, slug: string, ruleId: string): Promise<void> {
  const ws = await requireWorkspaceAccess(userId, slug, "manageSettings");
  await getDb().$transaction(async (tx) => {
    const rule = await tx.permissionRule.findFirst({ where: { id: ruleId, workspaceId: ws.id } });
    // Checked by the delete's count too, so two owners revoking at once write one audit entry.
    const { count } = rule
      ? await tx.permissionRule.deleteMany({ where: { id: rule.id, workspaceId: ws.id } })
      : { count: 0 };
    if (!rule || count === 0)
      throw new AppError(ErrorCode.notFound, "No such rule in this workspace: it may have been revoked already.");
    await tx.auditLog.create({
      data: {
        actorId: userId,
        action: "permissionRule.revoke",
        objectType: "permissionRule",
        objectId: rule.id,
        workspaceId: ws.id,
        details: JSON.stringify({
          toolName: rule.toolName,
          ruleContent: rule.ruleContent,
          behavior: rule.behavior,
          createdById: rule.createdById,
          createdAt: rule.createdAt.toISOString(),
        }),
      },
    });
  });
}
