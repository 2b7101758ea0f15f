/**
 * The admin's user list and account changes: search by email or name (in the database, a page at
 * a time by email), each account's workspaces and this UTC month's spend against its budget;
 * make or unmake admin, disable or enable (`refuseAccountChange` keeps one enabled admin).
 * Disabling bumps the account's session version: its cookies stop working at once, and the
 * sidecar's revocation sweep closes its open sockets within about 2 s. Every change is audited.
 */
import { getDb } from "@/server/db/client";
import { parseDatabaseUrl, DEFAULT_DATABASE_URL } from "@/server/db/database-url";
import { AccountChange, refuseAccountChange } from "@/server/domain/account/admin-rules";
import { monthRange } from "@/server/domain/cost/budget";
import { roundUsd } from "@/server/domain/cost/cost-reducer";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import type { AdminUserChange, AdminUserPage, AdminUserView } from "@/server/shared/wire/admin";
import type { CurrentUser } from "@/server/web/auth";

/** Users per page. */
export const ADMIN_USERS_PAGE_SIZE = 50;
/** Workspaces named per user (the rest are counted). */
const workspacesShown = 5;

/** Case-insensitive `contains` on both providers (SQLite's LIKE already is, for ASCII). */
function containsText(text: string): { contains: string } {
  const provider = parseDatabaseUrl(process.env.DATABASE_URL || DEFAULT_DATABASE_URL).provider;
  return (provider === "postgresql" ? { contains: text, mode: "insensitive" } : { contains: text }) as {
    contains: string;
  };
}

/** One page of accounts whose email or name contains `q`, after the email `cursor`. */
export async function listAdminUsers(
  params: { q?: string; cursor?: string },
  now = new Date(),
  pageSize = ADMIN_USERS_PAGE_SIZE,
): Promise<AdminUserPage> {
  const db = getDb();
  const q = params.q?.trim();
  const rows = await db.user.findMany({
    where: {
      ...(q ? { OR: [{ email: containsText(q.toLowerCase()) }, { name: containsText(q) }] } : {}),
      ...(params.cursor ? { email: { gt: params.cursor } } : {}),
    },
    orderBy: { email: "asc" },
    take: pageSize + 1,
    select: {
      id: true,
      email: true,
      name: true,
      isAdmin: true,
      disabledAt: true,
      lastSignInAt: true,
      createdAt: true,
      monthlyBudgetUsd: true,
      memberships: {
        take: workspacesShown,
        orderBy: { createdAt: "asc" },
        select: { role: true, workspace: { select: { name: true, slug: true } } },
      },
      _count: { select: { memberships: true } },
    },
  });
  const page = rows.slice(0, pageSize);
  const { from, to } = monthRange(now);
  // One grouped SUM for the page, over the (userId, at) index.
  const spend = await db.costEntry.groupBy({
    by: ["userId"],
    where: { userId: { in: page.map((u) => u.id) }, at: { gte: from, lt: to } },
    _sum: { usd: true },
  });
  const spent = new Map(spend.map((s) => [s.userId, roundUsd(s._sum.usd ?? 0)]));
  const users: AdminUserView[] = page.map((u) => ({
    id: u.id,
    email: u.email,
    name: u.name,
    isAdmin: u.isAdmin,
    disabledAt: u.disabledAt?.toISOString() ?? null,
    lastSignInAt: u.lastSignInAt?.toISOString() ?? null,
    createdAt: u.createdAt.toISOString(),
    workspaces: u.memberships.map((m) => ({ name: m.workspace.name, slug: m.workspace.slug, role: m.role })),
    workspaceCount: u._count.memberships,
    monthSpentUsd: spent.get(u.id) ?? 0,
    monthlyBudgetUsd: u.monthlyBudgetUsd,
  }));
  return { users, nextCursor: rows.length > pageSize ? (page.at(-1)?.email ?? null) : null };
}

/** Makes or unmakes an admin, or disables or enables an account (audited). */
export async function changeAccount(actor: CurrentUser, targetId: string, input: AdminUserChange): Promise<void> {
  const change =
    "isAdmin" in input
      ? input.isAdmin
        ? AccountChange.grantAdmin
        : AccountChange.revokeAdmin
      : input.disabled
        ? AccountChange.disable
        : AccountChange.enable;
  const db = getDb();
  // Count and change in one transaction, so two admins cannot each remove the other as "not the last".
  await db.$transaction(async (tx) => {
    const target = await tx.user.findUnique({
      where: { id: targetId },
      select: { id: true, email: true, isAdmin: true, disabledAt: true },
    });
    if (!target) throw new AppError(ErrorCode.notFound, "No such user.");
    const enabledAdminCount = await tx.user.count({ where: { isAdmin: true, disabledAt: null } });
    const refusal = refuseAccountChange({
      actorId: actor.id,
      target: { id: target.id, isAdmin: target.isAdmin, disabled: target.disabledAt !== null },
      change,
      enabledAdminCount,
    });
    if (refusal) throw new AppError(ErrorCode.conflict, refusal);
    const data =
      change === AccountChange.grantAdmin
        ? { isAdmin: true }
        : change === AccountChange.revokeAdmin
          ? { isAdmin: false }
          : change === AccountChange.disable
            ? // A new session version voids every cookie and socket token of the account.
              { disabledAt: target.disabledAt ?? new Date(), sessionVersion: { increment: 1 } }
            : { disabledAt: null };
    await tx.user.update({ where: { id: target.id }, data });
    await tx.auditLog.create({
      data: {
        actorId: actor.id,
        action: auditActionOf[change],
        objectType: "user",
        objectId: target.id,
        details: JSON.stringify({ email: target.email }),
      },
    });
  });
}

const auditActionOf: Record<AccountChange, string> = {
  [AccountChange.grantAdmin]: "user.admin.grant",
  [AccountChange.revokeAdmin]: "user.admin.revoke",
  [AccountChange.disable]: "user.disable",
  [AccountChange.enable]: "user.enable",
};
