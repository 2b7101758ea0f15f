/**
 * Monthly budgets as the web app sets and shows them: owners set their workspace's limit, the
 * admin sets each user's. Spend is always the sum of cost entries in the UTC month
 * (`monthlySpend`), never a stored counter.
 */
import { z } from "zod";
import { getDb } from "@/server/db/client";
import { monthlySpend } from "@/server/db/cost-entries";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import type { CurrentUser } from "@/server/web/auth";
import { requireWorkspaceAccess } from "@/server/web/workspaces";

/** `{ monthlyBudgetUsd: number ≥ 0 | null }`; null removes the limit. */
export const ZBudgetInput = z.object({ monthlyBudgetUsd: z.number().min(0).max(1_000_000).nullable() });
export type BudgetInput = z.infer<typeof ZBudgetInput>;

/** A limit with this month's spend against it. */
export interface BudgetView {
  monthlyBudgetUsd: number | null;
  spentUsd: number;
  from: string;
  to: string;
}

/** The workspace's limit and this month's spend in it (any member may read). */
export async function readWorkspaceBudget(userId: string, slug: string, now = new Date()): Promise<BudgetView> {
  const ws = await requireWorkspaceAccess(userId, slug, "read");
  const row = await getDb().workspace.findUniqueOrThrow({ where: { id: ws.id }, select: { monthlyBudgetUsd: true } });
  const spend = await monthlySpend(getDb(), { workspaceId: ws.id }, now);
  return {
    monthlyBudgetUsd: row.monthlyBudgetUsd,
    spentUsd: spend.usd,
    from: spend.from.toISOString(),
    to: spend.to.toISOString(),
  };
}

/** Sets the workspace's monthly limit (owners only). */
export async function setWorkspaceBudget(userId: string, slug: string, input: BudgetInput): Promise<BudgetView> {
  const ws = await requireWorkspaceAccess(userId, slug, "manageSettings");
  await getDb().workspace.update({ where: { id: ws.id }, data: { monthlyBudgetUsd: input.monthlyBudgetUsd } });
  await getDb().auditLog.create({
    data: {
      actorId: userId,
      action: "workspace.budget",
      objectType: "workspace",
      objectId: ws.id,
      workspaceId: ws.id,
      details: JSON.stringify(input),
    },
  });
  return readWorkspaceBudget(userId, slug);
}

/** Sets a user's monthly limit (the admin only). */
export async function setUserBudget(actor: CurrentUser, targetUserId: string, input: BudgetInput): Promise<BudgetView> {
  if (!actor.isAdmin) throw new AppError(ErrorCode.forbidden, "Only an administrator sets user budgets.");
  const db = getDb();
  const target = await db.user.findUnique({ where: { id: targetUserId }, select: { id: true } });
  if (!target) throw new AppError(ErrorCode.notFound, "No such user.");
  await db.user.update({ where: { id: targetUserId }, data: { monthlyBudgetUsd: input.monthlyBudgetUsd } });
  await db.auditLog.create({
    data: {
      actorId: actor.id,
      action: "user.budget.set",
      objectType: "user",
      objectId: targetUserId,
      details: JSON.stringify(input),
    },
  });
  const spend = await monthlySpend(db, { userId: targetUserId }, new Date());
  return {
    monthlyBudgetUsd: input.monthlyBudgetUsd,
    spentUsd: spend.usd,
    from: spend.from.toISOString(),
    to: spend.to.toISOString(),
  };
}
