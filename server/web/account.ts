/**
 * The signed-in person's own account: name, password, and this month's spend against their
 * budget. Changing the password bumps the session version, so every other cookie of the account
 * stops working; the browser that changed it signs in again with the new password.
 */
import { getDb } from "@/server/db/client";
import { monthlySpend } from "@/server/db/cost-entries";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import type { CurrentUser } from "@/server/web/auth";
import { checkPasswordStrength, hashPassword, verifyPassword } from "@/server/web/passwords";
import { signInThrottle, throttledMessage } from "@/server/web/rate-limit";

/**
 * Wrong current passwords are throttled like sign-ins, keyed on the account alone: guessing the
 * password needs this account's cookie, so only its holder is slowed down.
 */
const passwordChangeKey = (userId: string) => `password-change:${userId}`;

export interface AccountView {
  email: string;
  name: string;
  isAdmin: boolean;
  hasPassword: boolean;
  monthlyBudgetUsd: number | null;
  spentUsd: number;
  from: string;
  to: string;
}

/** The account page's data. */
export async function readAccount(user: CurrentUser, now = new Date()): Promise<AccountView> {
  const db = getDb();
  const row = await db.user.findUniqueOrThrow({ where: { id: user.id }, select: { email: true, name: true, isAdmin: true, passwordHash: true, monthlyBudgetUsd: true } });
  const spend = await monthlySpend(db, { userId: user.id }, now);
  return {
    email: row.email,
    name: row.name,
    isAdmin: row.isAdmin,
    hasPassword: row.passwordHash !== null,
    monthlyBudgetUsd: row.monthlyBudgetUsd,
    spentUsd: spend.usd,
    from: spend.from.toISOString(),
    to: spend.to.toISOString(),
  };
}

/** Renames the account. */
export async function renameAccount(user: CurrentUser, name: string): Promise<{ name: string }> {
  const trimmed = name.trim();
  if (!trimmed) throw new AppError(ErrorCode.invalidPayload, "Enter a name.");
  const db = getDb();
  await db.user.update({ where: { id: user.id }, data: { name: trimmed } });
  await db.auditLog.create({ data: { actorId: user.id, action: "user.rename", objectType: "user", objectId: user.id, details: JSON.stringify({ from: user.name, to: trimmed }) } });
  return { name: trimmed };
}

/**
 * Changes the password after checking the current one (an account made with GitHub has none
 * and sets its first). Bumps the session version: every cookie of the account, this one too,
 * is void afterwards.
 */
export async function changePassword(user: CurrentUser, input: { currentPassword: string; newPassword: string }): Promise<void> {
  const db = getDb();
  const row = await db.user.findUniqueOrThrow({ where: { id: user.id }, select: { email: true, passwordHash: true } });
  const verdict = signInThrottle.check(row.email, passwordChangeKey(user.id));
  if (!verdict.ok) throw new AppError(ErrorCode.rateLimited, throttledMessage(verdict.retryAfterMs));
  if (row.passwordHash && !(await verifyPassword(row.passwordHash, input.currentPassword))) {
    signInThrottle.recordFailure(row.email, passwordChangeKey(user.id));
    throw new AppError(ErrorCode.forbidden, "The current password is wrong.");
  }
  signInThrottle.recordSuccess(row.email, passwordChangeKey(user.id));
  const weak = checkPasswordStrength(input.newPassword, row.email);
  if (weak) throw new AppError(ErrorCode.invalidPayload, `Password too weak: ${weak}`);
  if (input.newPassword === input.currentPassword) throw new AppError(ErrorCode.invalidPayload, "Choose a password different from the current one.");
  const passwordHash = await hashPassword(input.newPassword);
  await db.user.update({ where: { id: user.id }, data: { passwordHash, sessionVersion: { increment: 1 } } });
  await db.auditLog.create({ data: { actorId: user.id, action: "user.password", objectType: "user", objectId: user.id } });
}

/**
 * Sign-out: voids every cookie of the account that carries version `sv` (a stale cookie cannot
 * sign anyone out). Called by next-auth's `signOut` event.
 */
export async function endSessions(userId: string, sv: number): Promise<void> {
  const db = getDb();
  const { count } = await db.user.updateMany({ where: { id: userId, sessionVersion: sv }, data: { sessionVersion: { increment: 1 } } });
  if (count === 1) await db.auditLog.create({ data: { actorId: userId, action: "user.signout", objectType: "user", objectId: userId } });
}
